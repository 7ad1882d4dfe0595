package foreground

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// countBytes is the size of the count in its memory file.
const countBytes = 8

// file is the memory file holding this process's count; nil when the count is not shared.
var file *os.File

// newCount makes the count in a memory file of its own, mapped shared, or in this process's
// memory when that fails.
func newCount() *atomic.Int64 {
	fd, err := unix.MemfdCreate("mgmtapi-foreground", unix.MFD_CLOEXEC)
	if err != nil {
		return new(atomic.Int64)
	}
	f := os.NewFile(uintptr(fd), "mgmtapi-foreground")
	c, err := mapCount(fd, true)
	if err != nil {
		_ = f.Close()
		return new(atomic.Int64)
	}
	file = f
	return c
}

// mapCount maps the count of the memory file fd, sized first when writable.
func mapCount(fd int, writable bool) (*atomic.Int64, error) {
	prot := unix.PROT_READ
	if writable {
		if err := unix.Ftruncate(fd, countBytes); err != nil {
			return nil, err
		}
		prot |= unix.PROT_WRITE
	}
	mem, err := unix.Mmap(fd, 0, countBytes, prot, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	// a mapping starts on a page boundary, so the count is aligned as atomic operations need
	return (*atomic.Int64)(unsafe.Pointer(&mem[0])), nil
}

// File is the memory file holding the count, for a child process to inherit (one of
// exec.Cmd's ExtraFiles) and Attach; nil when the count is not shared.
func File() *os.File { return file }

// Attach makes Serving read the count held in f, a parent's File that this process inherited,
// instead of this process's own: a child then sees the parent's requests. The mapping is read
// only; Enter and Leave still count this process's own.
func Attach(f *os.File) error {
	c, err := mapCount(int(f.Fd()), false)
	if err != nil {
		return fmt.Errorf("map the parent's request count: %w", err)
	}
	watched.Store(c)
	return nil
}
