// Package foreground counts the API requests the process is answering now, in memory it shares
// with the child processes it starts: background work in such a child (the notification
// templates' evaluation child, internal/notifyexpr) steps aside while requests are answered, as
// background work in the process itself does.
//
// On Linux the count lives in a memory file (memfd) mapped by both processes; a child is given
// the file with File and maps it with Attach. Elsewhere, or when the file cannot be made, the
// count is the process's own and a child never sees a request.
package foreground

import "sync/atomic"

// own is the number of requests this process is answering (Enter, Leave).
var own = newCount()

// watched is the count Serving reads: own, or the parent's in a child that attached to it.
var watched atomic.Pointer[atomic.Int64]

func init() { watched.Store(own) }

// Enter counts a request the process begins to answer; Leave is called once it is answered.
func Enter() { own.Add(1) }

// Leave ends what Enter began.
func Leave() { own.Add(-1) }

// Serving reports whether a request is being answered now: in this process, or in a child
// that attached to its parent's count, in the parent.
func Serving() bool { return watched.Load().Load() > 0 }
