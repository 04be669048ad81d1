package probe

import (
	"os/exec"
	"strings"
	"testing"
)

// TestIntendedInlining keeps the per-bit work of Put and MightContain free of
// calls: the index step and the bit array's Get and Set must stay small
// enough for the compiler to inline.
func TestIntendedInlining(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", "github.com/mitzbloom/mitzbloom/internal/probe", "github.com/mitzbloom/mitzbloom/internal/bitarray").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, fn := range []string{"Mitz32.Combined", "Mitz64.Combined", "(*Array).Reduce", "(*Array).Get", "(*Array).Bit", "(*Array).Set", "(*Array).SetPlain"} {
		if !strings.Contains(string(out), "can inline "+fn) {
			t.Errorf("%s no longer inlines", fn)
		}
	}
}
