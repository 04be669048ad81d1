//go:build !linux && !darwin

package main

import "errors"

func setOpenFileLimit(n uint64) error { return errors.ErrUnsupported }
