package main

import (
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

// A command is a subcommand of mitzbloom.
type command struct {
	name string
	// synopsis is what follows "mitzbloom NAME" in its usage line, with
	// optional arguments in brackets.
	synopsis string
	// doc is what -h prints between the usage line and the flags, and what
	// doc.go says of the command: paragraphs of doc comment text.
	doc string
	// run defines the command's flags on fs, parses args with fs and runs
	// the command, returning its exit status.
	run func(e *env, fs *flagSet, args []string) int
}

// commands are the subcommands, in the order the help lists them.
var commands = []*command{
	{"build", buildSynopsis, buildDoc, (*env).build},
	{"inspect", inspectSynopsis, inspectDoc, (*env).inspect},
	{"query", querySynopsis, queryDoc, (*env).query},
	{"merge", mergeSynopsis, mergeDoc, (*env).merge},
	{"version", versionSynopsis, versionDoc, (*env).version},
}

// usage returns c's usage line: "mitzbloom NAME", then its synopsis if it
// has one.
func (c *command) usage() string {
	if c.synopsis == "" {
		return "mitzbloom " + c.name
	}
	return "mitzbloom " + c.name + " " + c.synopsis
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run runs the command line args, without the program name.
func run(args []string, e *env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, synopses())
		fmt.Fprint(e.stderr, "\n"+moreHelp)
		return exitError
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			fmt.Fprint(e.stdout, mainHelp())
			return exitOK
		}
		// "help COMMAND", as the go command has it.
		c := lookup(args[1])
		switch {
		case len(args) > 2:
			return e.mainUsageError("help", "want one command, not %d", len(args)-1)
		case c == nil:
			return e.mainUsageError("help", "unknown command %q: want one of %s", args[1], commandNames())
		}
		return c.run(e, e.newFlags(c), []string{"-h"})
	}
	c := lookup(args[0])
	if c == nil {
		return e.mainUsageError("", "unknown command %q: want one of %s", args[0], commandNames())
	}
	return c.run(e, e.newFlags(c), args[1:])
}

// commandNames lists the commands for an error message.
func commandNames() string {
	s := ""
	for i, c := range commands {
		switch {
		case i == len(commands)-1:
			s += " or "
		case i > 0:
			s += ", "
		}
		s += c.name
	}
	return s
}

// mainUsageError reports a bad use of mitzbloom itself, or of its help
// command.
func (e *env) mainUsageError(cmd, format string, args ...any) int {
	prefix := "mitzbloom"
	if cmd != "" {
		prefix += " " + cmd
	}
	fmt.Fprintf(e.stderr, "%s: %s\nRun 'mitzbloom -h' for usage.\n", prefix, fmt.Sprintf(format, args...))
	return exitError
}

// fail reports err on standard error and returns exitError.
func (e *env) fail(cmd string, err error) int {
	fmt.Fprintf(e.stderr, "mitzbloom %s: %v\n", cmd, err)
	return exitError
}
