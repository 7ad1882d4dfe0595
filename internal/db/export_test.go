package db

// WrapLogFlush makes the SQLite group committer of d flush its write-ahead log through wrap,
// which gets the real flush. Set it before the first write transaction.
func WrapLogFlush(d *DB, wrap func(flush func() error) error) {
	flush := d.group.flushWAL
	d.group.flushLog = func() error { return wrap(flush) }
}
