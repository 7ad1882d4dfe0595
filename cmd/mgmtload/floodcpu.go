package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Where a flood's time goes: the flood prints, beside the latencies, what each of the two
// processes (the load generator and mgmtapi) did with the machine's cores while it ran — the CPU
// time each used, the time their threads waited for a core in the kernel's run queue, and how
// long their goroutines waited, runnable, for a thread of their own Go scheduler. A refusal that
// the server's histogram times in under a millisecond but the client in a hundred is waiting in
// one of these queues.

// cpuSample is one process's counters at one instant.
type cpuSample struct {
	// cpu is the user and system time used; runQueue the time its threads spent runnable in the
	// kernel's run queue, waiting for a core (the sum over the threads, from schedstat).
	cpu, runQueue time.Duration
}

// sampleCPU reads pid's counters from /proc; a counter it cannot read stays 0.
func sampleCPU(pid int) cpuSample {
	var s cpuSample
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// The fields after the command (which may hold spaces) start after the last ')'.
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 {
			fields := strings.Fields(string(b[i+1:]))
			// utime and stime are fields 14 and 15 of stat, 12 and 13 after the command.
			if len(fields) > 12 {
				user, _ := strconv.ParseInt(fields[11], 10, 64)
				system, _ := strconv.ParseInt(fields[12], 10, 64)
				s.cpu = time.Duration(user+system) * time.Second / clockTicks
			}
		}
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue
		}
		fields := strings.Fields(string(b))
		if len(fields) >= 2 {
			waited, _ := strconv.ParseInt(fields[1], 10, 64)
			s.runQueue += time.Duration(waited)
		}
	}
	return s
}

// clockTicks is USER_HZ, the unit of utime and stime: 100 on every Linux this runs on.
const clockTicks = 100

func (s cpuSample) minus(o cpuSample) cpuSample {
	return cpuSample{cpu: s.cpu - o.cpu, runQueue: s.runQueue - o.runQueue}
}

// goSchedLatencies is this process's own histogram of the time goroutines spent runnable before
// they ran (runtime/metrics /sched/latencies:seconds).
func goSchedLatencies() *metrics.Float64Histogram {
	sample := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return sample[0].Value.Float64Histogram()
}

// histogramQuantile is the upper bound of the bucket holding the q-quantile of after minus
// before (both from goSchedLatencies), or -1 when there is nothing.
func histogramQuantile(before, after *metrics.Float64Histogram, q float64) time.Duration {
	if before == nil || after == nil || len(before.Counts) != len(after.Counts) {
		return -1
	}
	var total uint64
	for i := range after.Counts {
		total += after.Counts[i] - before.Counts[i]
	}
	if total == 0 {
		return -1
	}
	var seen uint64
	for i := range after.Counts {
		seen += after.Counts[i] - before.Counts[i]
		if float64(seen) >= q*float64(total) {
			upper := after.Buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = after.Buckets[i]
			}
			return time.Duration(upper * float64(time.Second))
		}
	}
	return -1
}

// histogramOver is the share of after minus before above bound.
func histogramOver(before, after *metrics.Float64Histogram, bound time.Duration) float64 {
	if before == nil || after == nil || len(before.Counts) != len(after.Counts) {
		return 0
	}
	var total, over uint64
	for i := range after.Counts {
		n := after.Counts[i] - before.Counts[i]
		total += n
		if after.Buckets[i] >= bound.Seconds() {
			over += n
		}
	}
	if total == 0 {
		return 0
	}
	return float64(over) / float64(total)
}

// durationOrDash formats d, or "-" when it is negative (nothing measured).
func durationOrDash(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return d.Round(time.Microsecond).String()
}

// pinThreads sets the CPU affinity of every thread of this process to the one CPU cpu. A thread
// inherits the affinity of the thread that starts it, and so does a child process: a few passes
// over the threads catch those started during the first.
func pinThreads(cpu int) error {
	var mask [16]uint64 // room for 1,024 CPUs
	mask[cpu/64] |= 1 << (cpu % 64)
	for range 3 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
			if errno != 0 && errno != syscall.ESRCH {
				return fmt.Errorf("pin thread %d to CPU %d: %w", tid, cpu, errno)
			}
		}
	}
	return nil
}

// printFloodFloor prints what an answer cost each process in CPU, averaged over every answer of
// the flood, and the least time in which connections requests sent at once can all be answered
// on this machine's cores at that cost: the opening burst's floor. With clients that ignore
// Retry-After every connection always has a request in flight, so by Little's law the mean
// latency of the whole flood is at least the same figure. The floor is printed for a
// refusals-only flood (-flood-refusals-only), where the average is a refusal's cost; otherwise the
// admitted requests' handlers are in the average, and only it is printed.
func printFloodFloor(w io.Writer, out floodOutcome, serverCPU, generatorCPU time.Duration, connections int, refusalsOnly bool) {
	answers := 0
	for _, n := range out.statuses {
		answers += n
	}
	if answers == 0 {
		return
	}
	server, generator := serverCPU/time.Duration(answers), generatorCPU/time.Duration(answers)
	if !refusalsOnly {
		fmt.Fprintf(w, "CPU per answer, averaged over every answer (admitted ones included; -flood-refusals-only gives a refusal's cost and the opening burst's floor): mgmtapi %s, load generator %s\n",
			server.Round(100*time.Nanosecond), generator.Round(100*time.Nanosecond))
		return
	}
	floor := time.Duration(connections) * (server + generator) / time.Duration(runtime.NumCPU())
	what := "every answer (refusals only)"
	fmt.Fprintf(w, "CPU per answer, averaged over %s: mgmtapi %s, load generator %s; floor of %d requests sent at once on %d cores: %d × (%s + %s) / %d = %s\n",
		what, server.Round(100*time.Nanosecond), generator.Round(100*time.Nanosecond), connections, runtime.NumCPU(),
		connections, server.Round(100*time.Nanosecond), generator.Round(100*time.Nanosecond), runtime.NumCPU(), floor.Round(time.Millisecond))
}
