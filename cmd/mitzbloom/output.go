package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// writeAtomic writes what w writes to the file name, or nothing: it writes
// a temporary file beside name and renames it to name only once it is
// complete and synced, so that a failed command leaves no output, and a
// reader of name never sees half a filter. Its errors begin with name.
func writeAtomic(name string, w io.WriterTo) (err error) {
	// Rename would replace an empty directory, and fail on another with
	// "file exists".
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: is a directory, not a file to write", name)
	}
	dir := filepath.Dir(name)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return fmt.Errorf("%s: cannot create a file in %s: %w", name, dir, pathCause(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("%s: %w", name, pathCause(err))
		}
	}()
	if _, err := w.WriteTo(tmp); err != nil {
		return err
	}
	// CreateTemp makes the file readable by its owner only; a filter is
	// meant to be shipped to other services.
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// pathCause returns the cause of a failed operation on a path: errors name
// the file the user named, not the temporary file beside it.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// errTerminal reports an attempt to write a filter to a terminal.
var errTerminal = errors.New("refusing to write a binary filter to a terminal; use -o FILE or redirect standard output")

// writeOutput writes w to the file name, or to standard output if name is
// empty or "-".
func (e *env) writeOutput(name string, w io.WriterTo) error {
	if name != "" && name != "-" {
		return writeAtomic(name, w)
	}
	if isTerminal(e.stdout) {
		return errTerminal
	}
	if _, err := w.WriteTo(e.stdout); err != nil {
		return fmt.Errorf("writing standard output: %w", err)
	}
	return nil
}

// isTerminal reports whether w is a terminal: a character device, as the
// standard library alone can tell (/dev/null is one too).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
