//go:build !linux

package foreground

import (
	"errors"
	"os"
	"sync/atomic"
)

// newCount makes the count in this process's memory: it is not shared here.
func newCount() *atomic.Int64 { return new(atomic.Int64) }

// File is nil here: the count is not shared.
func File() *os.File { return nil }

// Attach fails here: the count is not shared.
func Attach(*os.File) error { return errors.New("request counts are shared only on Linux") }
