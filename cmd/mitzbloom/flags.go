package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A flagSet is the flag set of one run of a command. Unlike a plain
// flag.FlagSet it prints -h to standard output and its errors as one line
// and a hint, as the go command does.
type flagSet struct {
	*flag.FlagSet
	e   *env
	cmd *command
}

// newFlags returns an empty flag set for c.
func (e *env) newFlags(c *command) *flagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	// The flag package would print its errors, and the whole usage after
	// each; parse prints them its own way.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{fs, e, c}
}

// help writes c's help to w: its usage line, its doc and its flags.
func (fs *flagSet) help(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n\nFlags:\n", fs.cmd.usage(), strings.TrimSpace(fs.cmd.doc))
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// parse parses args, in which flags may come before, between and after the
// other arguments, as in "build keys.txt -p 0.01"; after "--" all are
// arguments. It returns the arguments that are not flags, and whether to
// stop with status: for -h, which it answers, or for a bad flag, which it
// reports.
func (fs *flagSet) parse(args []string) (rest []string, stop bool, status int) {
	for {
		err := fs.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			fs.help(fs.e.stdout)
			return nil, true, exitOK
		case err != nil:
			return nil, true, fs.usageError("%v", err)
		}
		left := fs.Args()
		if len(left) == 0 {
			return rest, false, exitOK
		}
		// Parse stops at the first non-flag, or after a "--".
		if consumed := len(args) - len(left); consumed > 0 && args[consumed-1] == "--" {
			return append(rest, left...), false, exitOK
		}
		rest, args = append(rest, left[0]), left[1:]
	}
}

// isSet reports whether the flag name was given.
func (fs *flagSet) isSet(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// usageError reports a bad use of the command's arguments, in one line and
// a hint, and returns exitError.
func (fs *flagSet) usageError(format string, args ...any) int {
	fmt.Fprintf(fs.e.stderr, "mitzbloom %s: %s\nRun 'mitzbloom %s -h' for usage.\n", fs.cmd.name, fmt.Sprintf(format, args...), fs.cmd.name)
	return exitError
}

// maxBytesFlag defines -max-bytes on fs.
func maxBytesFlag(fs *flagSet) *int64 {
	var limit byteLimit
	fs.Var(&limit, "max-bytes", "refuse a file whose filters take more than `N` bytes, by their headers\nalone (0: no limit; a filter never takes much more memory than the bytes\nread)")
	return (*int64)(&limit)
}

// byteLimit is the value of -max-bytes: a number of bytes, 0 for none.
type byteLimit int64

var _ flag.Value = (*byteLimit)(nil)

func (l *byteLimit) String() string { return strconv.FormatInt(int64(*l), 10) }

func (l *byteLimit) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return errors.New("not a number of bytes")
	}
	if n < 0 {
		return fmt.Errorf("%d bytes is negative; 0 means no limit", n)
	}
	*l = byteLimit(n)
	return nil
}
