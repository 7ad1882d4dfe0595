package db

// Committers returns how many batches can run at once on PostgreSQL: 0 without group commit.
func Committers(d *DB) int {
	if d.pgGroup == nil {
		return 0
	}
	return d.pgGroup.committers
}

// EnablePgGroupCommit turns the PostgreSQL group commit on for d, a database just opened, with n
// committers, whatever pgCommitters says.
func EnablePgGroupCommit(d *DB, n int) {
	if d.Engine == Postgres && d.pgGroup == nil {
		d.pgGroup = newPgGroupCommitter(d.write, n)
	}
}
