package notifyexpr

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

// lowerPriority sets every thread of the process to nice 19 (on Linux a priority is a thread's,
// and a new thread takes its creator's), twice, for the threads the runtime started during the
// first pass: the child was started at nice 19 already (see child.start); this is for a child
// started otherwise.
func lowerPriority() {
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			lowerThreadPriority()
			return
		}
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				lower(tid)
			}
		}
	}
}

// lowerThreadPriority sets the calling thread to nice 19, the lowest priority. Lowering a
// thread's priority needs no privilege; raising it back would. (SCHED_IDLE was measured too: no
// better for the requests, and it starves the child, and so the notifications, on a saturated
// machine, where nice 19 still gets a sliver.)
func lowerThreadPriority() { lower(syscall.Gettid()) }

func lower(tid int) { _ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19) }

// rusageThread is Linux's RUSAGE_THREAD, which package syscall does not name.
const rusageThread = 1

// threadCPU is the CPU time the calling thread has used, user and system: the evaluating
// goroutine's, as serveChild locks it to its thread (the garbage collector's own workers run on
// other threads, in parallel, as they do beside an evaluation in the server's process).
var threadCPU = func() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
