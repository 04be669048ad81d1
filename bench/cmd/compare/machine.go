package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/mitzbloom/mitzbloom/bench"
)

// Machine describes where a report was measured.
type Machine struct {
	CPU                   string
	Cores, GOMAXPROCS     int
	Memory                string
	OS, Arch, Kernel      string
	Go, Java, Guava       string
	Commit                string
	LoadBefore, LoadAfter string
}

func describeMachine(ctx context.Context) Machine {
	m := Machine{
		CPU:        cpuModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Memory:     memTotal(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		Kernel:     firstLine("/proc/sys/kernel/osrelease"),
		Go:         runtime.Version(),
		Java:       "not run",
		Guava:      "not run",
		Commit:     commit(ctx),
		LoadBefore: bench.LoadAverage(),
	}
	return m
}

// cpuModel describes the first CPU of /proc/cpuinfo: its model name,
// family and model numbers, and the cache size it reports.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	info := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() && sc.Text() != "" { // the first processor's block
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			info[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	model := info["model name"]
	if model == "" {
		return "unknown"
	}
	if info["cpu family"] != "" {
		model += fmt.Sprintf(" (family %s, model %s)", info["cpu family"], info["model"])
	}
	if info["cache size"] != "" {
		model += ", cache size " + info["cache size"]
	}
	return model
}

func memTotal() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kb int64
		if _, err := fmt.Sscanf(sc.Text(), "MemTotal: %d kB", &kb); err == nil {
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "unknown"
}

func firstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}

// commit returns the repository's commit, marked if the work tree differs.
func commit(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += " with uncommitted changes"
	}
	return c
}
