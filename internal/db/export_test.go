package db

// Committers returns how many batches can run at once on PostgreSQL: 0 without group commit.
func Committers(d *DB) int {
	if d.pgGroup == nil {
		return 0
	}
	return d.pgGroup.committers
}
