package db

import (
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// answerCache keeps LookupText's answers when this process holds the database alone: a SQLite
// file (Options.SharedFile unset), or a PostgreSQL database (Options.PostgresAlone; see
// postgresHold). Every change to the database is then made by this process's write
// transactions, so an answer read while none ran stays the database's answer until the next one
// begins.
//
// Writes are fenced, not traced: each write transaction (a batch of the group committer, or a
// transaction of its own before the committer starts) calls writing before its first statement
// and written after its last, whatever it commits or rolls back. generation counts those
// calls, and active the transactions between them. An answer is kept only when no write
// transaction was active when its read began and the generation had not moved when it ended;
// it is given only while the generation is the one it was kept with. A hit is therefore the
// state after the last write transaction that ended before it, as a read of the file would be;
// under a continuous stream of writes the cache is bypassed and lookups read the file.
//
// It holds at most answerCacheBytes of answers; past that, entries are dropped as Go's map
// iteration meets them. Answers larger than maxCachedAnswer are not kept.
type answerCache struct {
	generation atomic.Uint64
	active     atomic.Int64
	// path and handles are the file's key in answerCaches and the handles open on it (under
	// answerCaches' lock).
	path    string
	handles int

	mu      sync.RWMutex
	answers map[string]cachedAnswer
	bytes   int
}

type cachedAnswer struct {
	generation uint64
	text       []byte
}

const (
	answerCacheBytes = 8 << 20
	maxCachedAnswer  = 64 << 10
)

// answerCaches are the caches of the SQLite files this process has open, by the file's path with
// its symbolic links resolved: every handle on one file shares one cache, so that a write through
// one handle fences the lookups of the others (tests open a file more than once).
var answerCaches = struct {
	sync.Mutex
	byPath map[string]*answerCache
}{byPath: map[string]*answerCache{}}

// openAnswerCache returns the cache of the SQLite file in dir, shared with the other handles on
// it; closeAnswerCache gives it back when the handle closes.
func openAnswerCache(dir string) (*answerCache, error) {
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	path, err := filepath.Abs(filepath.Join(resolved, SQLiteFileName))
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	answerCaches.Lock()
	defer answerCaches.Unlock()
	c := answerCaches.byPath[path]
	if c == nil {
		c = newAnswerCache()
		c.path = path
		answerCaches.byPath[path] = c
	}
	c.handles++
	return c, nil
}

// newAnswerCache returns a cache of its own, for a PostgreSQL database held alone.
func newAnswerCache() *answerCache { return &answerCache{answers: map[string]cachedAnswer{}} }

func closeAnswerCache(c *answerCache) {
	answerCaches.Lock()
	defer answerCaches.Unlock()
	if c.handles--; c.handles == 0 {
		delete(answerCaches.byPath, c.path)
	}
}

// writing is called before a write transaction's first statement.
func (c *answerCache) writing() {
	c.active.Add(1)
	c.generation.Add(1)
}

// written is called after a write transaction's last statement (its COMMIT or ROLLBACK, or
// its failure).
func (c *answerCache) written() {
	c.generation.Add(1)
	c.active.Add(-1)
}

// answerKey is query and its arguments, which LookupText has converted to driver values.
func answerKey(buf []byte, query string, args []driver.NamedValue) ([]byte, bool) {
	buf = append(buf, query...)
	for _, a := range args {
		buf = append(buf, 0)
		switch v := a.Value.(type) {
		case int64:
			buf = append(buf, 'i')
			buf = strconv.AppendInt(buf, v, 10)
		case string:
			buf = append(buf, 's')
			buf = strconv.AppendInt(buf, int64(len(v)), 10)
			buf = append(buf, ':')
			buf = append(buf, v...)
		default: // other types are not kept
			return buf, false
		}
	}
	return buf, true
}

// get returns the answer kept for key at the current generation.
func (c *answerCache) get(key []byte) ([]byte, bool) {
	now := c.generation.Load()
	c.mu.RLock()
	a, ok := c.answers[string(key)]
	c.mu.RUnlock()
	if !ok || a.generation != now {
		return nil, false
	}
	return a.text, true
}

// before returns the generation a read that begins now may be kept under, and false when a
// write transaction is active (the read is then not kept).
func (c *answerCache) before() (uint64, bool) {
	gen := c.generation.Load()
	return gen, c.active.Load() == 0
}

// keep stores a copy of text for key, read from the file since before returned gen, unless a
// write transaction began in the meantime (get would never give it: it is kept under gen).
func (c *answerCache) keep(key []byte, gen uint64, text []byte) {
	if len(text) > maxCachedAnswer || c.generation.Load() != gen {
		return
	}
	kept := cachedAnswer{generation: gen, text: append([]byte(nil), text...)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.answers[string(key)]; ok {
		delete(c.answers, string(key))
		c.bytes -= len(key) + len(old.text)
	}
	for k, a := range c.answers {
		if c.bytes+len(key)+len(text) <= answerCacheBytes {
			break
		}
		delete(c.answers, k)
		c.bytes -= len(k) + len(a.text)
	}
	c.answers[string(key)] = kept
	c.bytes += len(key) + len(text)
}
