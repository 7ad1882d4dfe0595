//go:build !linux

package notifyexpr

import "time"

// lowerPriority does nothing here: the child runs at the server's priority.
func lowerPriority() {}

// lowerThreadPriority does nothing here.
func lowerThreadPriority() {}

// threadCPU is nil here: the child's time bound counts the wall clock.
var threadCPU func() time.Duration
