package main

import (
	"errors"
	"fmt"
	"runtime/debug"
)

const versionSynopsis = ""

const versionDoc = `
Version prints the version of the module github.com/mitzbloom/mitzbloom
that mitzbloom was built from, as the go command recorded it in the
binary, and the version of Go that built it: a release's tag, such as
v1.2.3, for mitzbloom installed with "go install ...@v1.2.3", a
pseudo-version for a commit, or (devel), with the commit where known, for
a build in a clone.
`

// modulePath is the path of the module whose version version prints.
const modulePath = "github.com/mitzbloom/mitzbloom"

func (e *env) version(fs *flagSet, args []string) int {
	rest, stop, status := fs.parse(args)
	if stop {
		return status
	}
	if len(rest) > 0 {
		return fs.usageError("unexpected argument %q", rest[0])
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return e.fail("version", errors.New("the binary holds no build information: it was not built with module support"))
	}
	fmt.Fprintln(e.stdout, versionLine(info))
	return exitOK
}

// versionLine returns "mitzbloom VERSION GOVERSION" for the binary info
// describes: VERSION is that of modulePath, the main module when the
// command is built in a clone or installed with go install, or a
// dependency when another module builds it.
func versionLine(info *debug.BuildInfo) string {
	v := "(unknown)"
	if info.Main.Path == modulePath {
		v = moduleVersion(&info.Main)
		if info.Main.Version == "" || info.Main.Version == "(devel)" {
			v = "(devel)" + vcsSuffix(info.Settings)
		}
	} else {
		for _, m := range info.Deps {
			if m.Path == modulePath {
				v = moduleVersion(m)
			}
		}
	}
	return "mitzbloom " + v + " " + info.GoVersion
}

// moduleVersion returns m's version, and what replaced it if anything
// did: a directory, or a module at a version.
func moduleVersion(m *debug.Module) string {
	v := m.Version
	if r := m.Replace; r != nil {
		v += " => " + r.Path
		if r.Version != "" && r.Version != "(devel)" {
			v += " " + r.Version
		}
	}
	return v
}

// vcsSuffix returns ", commit C" with C the commit a build from a clone
// recorded, and ", modified" if the clone had uncommitted changes, in
// parentheses, or "" if it recorded none (go build -buildvcs=false).
func vcsSuffix(settings []debug.BuildSetting) string {
	var rev, modified string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return ""
	}
	if modified == "true" {
		return " (commit " + rev + ", modified)"
	}
	return " (commit " + rev + ")"
}
