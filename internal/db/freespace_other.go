//go:build !unix

package db

// freeBytes does not know the free space where it cannot ask the file system for it.
func freeBytes(string) (uint64, bool) { return 0, false }
