package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Exit statuses, as grep's: query exits with exitAbsent when a key is
// certainly not in the filter.
const (
	exitOK     = 0
	exitAbsent = 1
	exitError  = 2
)

// An env is what a command runs against: the process's standard files, or
// a test's.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

func main() {
	os.Exit(run(os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}))
}

// commands are the subcommands; each returns an exit status.
var commands = map[string]func(e *env, args []string) int{
	"build":   (*env).build,
	"inspect": (*env).inspect,
	"query":   (*env).query,
	"merge":   (*env).merge,
}

// run runs the command line args, without the program name.
func run(args []string, e *env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return exitError
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(e.stdout, usage)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "mitzbloom: unknown command %q\n%s", args[0], usage)
		return exitError
	}
	return cmd(e, args[1:])
}

const usage = `usage: mitzbloom COMMAND [FLAGS] [ARGS]

  build -n N -p P [-funnel F] [-strategy mitz32|mitz64] [-legacy-k] [-o FILE] [INPUT...]
  inspect [-json] [-p P] [-max-bytes N] FILE...
  query FILE [-funnel F] [-q] [-max-bytes N] [KEY...]
  merge -o OUT [-max-bytes N] A B...

Run "mitzbloom COMMAND -h" for a command's flags.
`

// newFlags returns the flag set of a subcommand, which prints its errors
// and usage on e.stderr.
func (e *env) newFlags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: mitzbloom %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args into fs and returns the exit status to stop with,
// if it should stop: for -h, or for a bad flag, which fs has reported.
func parseFlags(fs *flag.FlagSet, args []string) (stop bool, status int) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return true, exitOK
	case err != nil:
		return true, exitError
	}
	return false, exitOK
}

// parseInterspersed is parseFlags for commands whose arguments are all
// files, where flags may come after the files too, as in
// "build keys.txt -p 0.01"; after "--" all are files. It returns the files.
func parseInterspersed(fs *flag.FlagSet, args []string) (files []string, stop bool, status int) {
	for {
		if stop, status := parseFlags(fs, args); stop {
			return nil, true, status
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, false, exitOK
		}
		// Parse stops at the first non-flag, or after a "--".
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(files, rest...), false, exitOK
		}
		files, args = append(files, rest[0]), rest[1:]
	}
}

// fail reports err on standard error and returns exitError.
func (e *env) fail(cmd string, err error) int {
	fmt.Fprintf(e.stderr, "mitzbloom %s: %v\n", cmd, err)
	return exitError
}

// usageError reports a bad use of a command's arguments.
func (e *env) usageError(fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "mitzbloom %s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	fs.Usage()
	return exitError
}

// maxBytesFlag defines -max-bytes on fs.
func maxBytesFlag(fs *flag.FlagSet) *int64 {
	return fs.Int64("max-bytes", 0, "refuse a file whose filters take more than `N` bytes, by their headers alone (0: no limit; a filter never takes more memory than the bytes read)")
}
