package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/mitzbloom/mitzbloom/bloom/mapped"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// The resident memory of a mapped filter, measured in child processes:
// opResident opens a file in place and reports the resident memory of the
// mapping after Open, after lookups and after BitCount, which reads every
// page, and how much anonymous memory (a private copy) the process gained;
// opShared, run in two processes at once, reports the share of the
// mapping each process is charged once both have read all of it (Pss).
const (
	opResident = "resident"
	opShared   = "shared"
)

// residentLookups is how many lookups opResident makes, of 7 pages each.
const residentLookups = 1000

// runResident runs opResident or opShared on path.
func runResident(op, path string) error {
	f, err := mapped.Open(path, funnel.Int64)
	if err != nil {
		return err
	}
	defer f.Close()
	if op == opShared {
		f.BitCount()
		fmt.Println("ready")
		// The other process reads the file too before either reports,
		// and neither closes it before both have.
		in := bufio.NewReader(os.Stdin)
		if _, err := in.ReadString('\n'); err != nil {
			return err
		}
		rss, pss, err := mappingKiB(path)
		fmt.Printf("rss=%d pss=%d\n", rss, pss)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, in)
		return err
	}
	anon := status("RssAnon")
	open, _, err := mappingKiB(path)
	if err != nil {
		return err
	}
	for k := range int64(residentLookups) {
		f.MightContain(k)
	}
	looked, _, _ := mappingKiB(path)
	f.BitCount()
	counted, _, _ := mappingKiB(path)
	fmt.Printf("open=%d lookups=%d count=%d anon=%d\n", open, looked, counted, status("RssAnon")-anon)
	return nil
}

// status returns a field of /proc/self/status in KiB, or -1.
func status(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

// mappingKiB returns the resident memory of the process's mappings of
// path and the share of it the process is charged (Pss), in KiB.
func mappingKiB(path string) (rss, pss int64, err error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	inside := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			inside = len(fields) >= 6 && fields[5] == path
			continue
		}
		if inside && len(fields) == 3 {
			n, _ := strconv.ParseInt(fields[1], 10, 64)
			switch fields[0] {
			case "Rss:":
				rss += n
			case "Pss:":
				pss += n
			}
		}
	}
	return rss, pss, nil
}

// measureResident reports the resident memory of path opened in place, in
// one process, then in two at once.
func measureResident(self, path string) error {
	out, err := exec.Command(self, "-child", opResident, "-file", path).Output()
	if err != nil {
		return err
	}
	var open, looked, counted, anon int64
	if _, err := fmt.Sscanf(string(out), "open=%d lookups=%d count=%d anon=%d", &open, &looked, &counted, &anon); err != nil {
		return fmt.Errorf("%q: %w", out, err)
	}
	fmt.Println("| resident memory of the mapping (Rss in /proc/self/smaps) | MiB |")
	fmt.Println("|---|---:|")
	fmt.Printf("| after mapped.Open | %.1f |\n", float64(open)/1024)
	fmt.Printf("| after %d lookups (7 pages each) | %.1f |\n", residentLookups, float64(looked)/1024)
	fmt.Printf("| after BitCount, which reads every page | %.1f |\n", float64(counted)/1024)
	fmt.Printf("| anonymous memory (RssAnon) the process gained meanwhile | %.1f |\n\n", float64(anon)/1024)

	var procs [2]*exec.Cmd
	var outs [2]*bufio.Reader
	var stdins [2]io.WriteCloser
	for i := range procs {
		procs[i] = exec.Command(self, "-child", opShared, "-file", path)
		if stdins[i], err = procs[i].StdinPipe(); err != nil {
			return err
		}
		stdout, err := procs[i].StdoutPipe()
		if err != nil {
			return err
		}
		outs[i] = bufio.NewReader(stdout)
		if err := procs[i].Start(); err != nil {
			return err
		}
		defer procs[i].Wait()
		defer stdins[i].Close()
		if line, err := outs[i].ReadString('\n'); err != nil || line != "ready\n" {
			return fmt.Errorf("process %d: %q, %v", i, line, err)
		}
	}
	fmt.Println("| two processes with the file open in place | Rss MiB | Pss MiB |")
	fmt.Println("|---|---:|---:|")
	for i := range procs {
		if _, err := io.WriteString(stdins[i], "report\n"); err != nil {
			return err
		}
	}
	for i := range procs {
		var rss, pss int64
		line, _ := outs[i].ReadString('\n')
		if _, err := fmt.Sscanf(line, "rss=%d pss=%d", &rss, &pss); err != nil {
			return fmt.Errorf("process %d: %q: %w", i, line, err)
		}
		fmt.Printf("| process %d | %.1f | %.1f |\n", i+1, float64(rss)/1024, float64(pss)/1024)
	}
	for i := range procs {
		stdins[i].Close()
	}
	fmt.Println()
	return nil
}
