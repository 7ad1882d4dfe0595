package incidents

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// rollupKey is one row of incident_rollup: the fields of an incident that E18 groups by or filters
// on and that have one value per incident (labels and times aside).
type rollupKey struct {
	name, application, subsystem, severity, state, status, assignedTo, meta string
	muted                                                                   bool
}

// countKey is the part of k that incident_counts counts by.
func (k rollupKey) countKey() countKey {
	return countKey{severity: k.severity, state: k.state, status: k.status, assignedTo: k.assignedTo, meta: k.meta}
}

// rollupEntry is an incident as incident_rollup and incident_label_rollup count it: its row, its
// contextual labels (the JSON object stored) and its times.
type rollupEntry struct {
	key        rollupKey
	contextual string
	created    int64
	closed     sql.NullInt64
	update     int64
}

// rollupRow is a row of incident_rollup (labeled and daily false), of incident_label_rollup (an
// incident's value of one contextual label key, and its rollupKey), of incident_day_rollup
// (daily: the UTC days of the incident's creation and close, and its rollupKey) or of
// incident_label_day_rollup (labeled and daily: the label's value, the days and the rollupKey).
type rollupRow struct {
	labeled              bool
	labelKey, labelValue string
	daily                bool
	createdDay           int64
	closedDay            int64 // openDay while open
	key                  rollupKey
}

// dayMicros is a day in microseconds; openDay is incident_day_rollup's closed_day of open incidents.
const (
	dayMicros = 86400000000
	openDay   = -1
)

// dayOf is the first microsecond of the UTC day of t (Unix microseconds, not before 1970).
func dayOf(t int64) int64 { return t - t%dayMicros }

// rows are the rollup rows that count the incident: one of incident_rollup, one of
// incident_day_rollup, and per contextual label one of incident_label_rollup and one of
// incident_label_day_rollup.
func (e rollupEntry) rows() ([]rollupRow, error) {
	labels, err := contextualLabels(e.contextual)
	if err != nil {
		return nil, err
	}
	closedDay := int64(openDay)
	if e.closed.Valid {
		closedDay = dayOf(e.closed.Int64)
	}
	rows := []rollupRow{{key: e.key}, {daily: true, createdDay: dayOf(e.created), closedDay: closedDay, key: e.key}}
	for _, l := range labels {
		rows = append(rows, rollupRow{labeled: true, labelKey: l.key, labelValue: l.value, key: e.key},
			rollupRow{labeled: true, labelKey: l.key, labelValue: l.value, daily: true, createdDay: dayOf(e.created), closedDay: closedDay, key: e.key})
	}
	return rows, nil
}

// rollupKeyColumns are incident_rollup's key columns after team_id, named as in incidents too.
const rollupKeyColumns = `name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted`

// rollupKeyMatch is the condition on rollupKeyColumns with parameters $2 to $10 ($1 is the team).
const rollupKeyMatch = `name = $2 AND application_name = $3 AND subsystem_name = $4 AND severity = $5 AND state = $6
	AND status = $7 AND assigned_to = $8 AND meta_labels = $9 AND is_muted = $10`

// labelRollupKeyMatch is the condition on incident_label_rollup's key after team_id, with the
// label's key and value as $11 and $12.
const labelRollupKeyMatch = rollupKeyMatch + ` AND key = $11 AND value = $12`

// dayRollupKeyMatch is the condition on incident_day_rollup's key after team_id, with the days
// as $11 and $12.
const dayRollupKeyMatch = rollupKeyMatch + ` AND created_day = $11 AND closed_day = $12`

// labelDayRollupKeyMatch is the condition on incident_label_day_rollup's key after team_id: the
// label's key and value as $11 and $12, the days as $13 and $14.
const labelDayRollupKeyMatch = labelRollupKeyMatch + ` AND created_day = $13 AND closed_day = $14`

func (r rollupRow) args(teamID int64) []any {
	k := r.key
	args := []any{teamID, k.name, k.application, k.subsystem, k.severity, k.state, k.status, k.assignedTo, k.meta, k.muted}
	if r.labeled {
		args = append(args, r.labelKey, r.labelValue)
	}
	if r.daily {
		args = append(args, r.createdDay, r.closedDay)
	}
	return args
}

// rollupEntry is the incident as the rollups count it.
func (r row) rollupEntry() rollupEntry {
	return rollupEntry{key: rollupKey{name: r.name, application: r.application, subsystem: r.subsystem, severity: r.severity,
		state: r.state, status: r.status, assignedTo: r.assignedTo, meta: r.meta, muted: r.isMuted},
		contextual: r.contextual, created: r.createdAt, closed: r.closedAt, update: r.lastStateUpdateTime}
}

// rollupDelta is a transaction's change to one incident_rollup row: incidents in minus out, the
// extremes of the times of the incidents that came in (or whose times grew in place), and the
// incidents that left (whose times, if they were the row's extremes, make it recompute them).
type rollupDelta struct {
	n        int64
	arrived  bool
	first    int64
	closed   sql.NullInt64
	update   int64
	departed []rollupEntry
	// the least last update of the incidents that came in (or whose times grew in place), which
	// lowers incident_day_rollup's first_update when it is below
	firstUpdate int64
}

func (d *rollupDelta) merge(e rollupEntry) {
	if !d.arrived || e.created < d.first {
		d.first = e.created
	}
	if e.closed.Valid && (!d.closed.Valid || e.closed.Int64 > d.closed.Int64) {
		d.closed = e.closed
	}
	if !d.arrived || e.update > d.update {
		d.update = e.update
	}
	if !d.arrived || e.update < d.firstUpdate {
		d.firstUpdate = e.update
	}
	d.arrived = true
}

// rollupDeltas are a transaction's changes to incident_rollup, written once before it commits
// in key order (as countDeltas, so that concurrent transactions cannot deadlock).
type rollupDeltas map[rollupRow]*rollupDelta

type rollupDeltasKey struct{ teamID int64 }

func rollupOf(ctx context.Context, tx *db.Tx, teamID int64) rollupDeltas {
	return tx.Local(rollupDeltasKey{teamID}, func() any {
		d := rollupDeltas{}
		tx.BeforeCommit(func() error { return d.write(ctx, tx, teamID) })
		return d
	}).(rollupDeltas)
}

func (d rollupDeltas) at(k rollupRow) *rollupDelta {
	if d[k] == nil {
		d[k] = &rollupDelta{}
	}
	return d[k]
}

// addRollup counts a new incident when tx commits.
func addRollup(ctx context.Context, tx *db.Tx, teamID int64, e rollupEntry) error {
	rows, err := e.rows()
	if err != nil {
		return err
	}
	deltas := rollupOf(ctx, tx, teamID)
	for _, r := range rows {
		at := deltas.at(r)
		at.n++
		at.merge(e)
	}
	return nil
}

// moveRollup records that an incident changed from one entry to another when tx commits: in
// place when its rows are the same and its times only grew, else out of its rows and into the others.
func moveRollup(ctx context.Context, tx *db.Tx, teamID int64, from, to rollupEntry) error {
	if from == to {
		return nil
	}
	deltas := rollupOf(ctx, tx, teamID)
	fromRows, err := from.rows()
	if err != nil {
		return err
	}
	toRows, err := to.rows()
	if err != nil {
		return err
	}
	// A row the incident stays in, with times that only grew, takes them in place; it leaves
	// the other rows it was in and arrives in the others it is in.
	grew := from.created == to.created && to.update >= from.update &&
		(!from.closed.Valid || (to.closed.Valid && to.closed.Int64 >= from.closed.Int64))
	stays := map[rollupRow]bool{}
	if grew {
		for _, r := range fromRows {
			stays[r] = true
		}
	}
	for _, r := range fromRows {
		if stays[r] && slices.Contains(toRows, r) {
			continue
		}
		out := deltas.at(r)
		out.n--
		out.departed = append(out.departed, from)
	}
	for _, r := range toRows {
		in := deltas.at(r)
		if stays[r] {
			in.merge(to)
			continue
		}
		in.n++
		in.merge(to)
	}
	return nil
}

// write applies the deltas in key order. A row whose count reaches 0 is removed; a row that an
// incident holding one of its extremes left recomputes its times from incidents_by_rollup (a
// range scan of the row's own incidents).
func (d rollupDeltas) write(ctx context.Context, tx *db.Tx, teamID int64) error {
	keys := make([]rollupRow, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(ra, rb rollupRow) int {
		a, b := ra.key, rb.key
		return cmp.Or(cmpBool(ra.labeled, rb.labeled), cmp.Compare(ra.labelKey, rb.labelKey), cmp.Compare(ra.labelValue, rb.labelValue),
			cmpBool(ra.daily, rb.daily), cmp.Compare(ra.createdDay, rb.createdDay), cmp.Compare(ra.closedDay, rb.closedDay),
			cmp.Compare(a.name, b.name), cmp.Compare(a.application, b.application), cmp.Compare(a.subsystem, b.subsystem),
			cmp.Compare(a.severity, b.severity), cmp.Compare(a.state, b.state), cmp.Compare(a.status, b.status),
			cmp.Compare(a.assignedTo, b.assignedTo), cmp.Compare(a.meta, b.meta), cmpBool(a.muted, b.muted))
	})
	for _, k := range keys {
		if err := d[k].write(ctx, tx, teamID, k); err != nil {
			return fmt.Errorf("roll incidents up: %w", err)
		}
	}
	return nil
}

func (delta *rollupDelta) write(ctx context.Context, tx *db.Tx, teamID int64, r rollupRow) error {
	table, columns, match := "incident_rollup", rollupKeyColumns, rollupKeyMatch
	switch {
	case r.labeled && r.daily:
		table, columns, match = "incident_label_day_rollup", rollupKeyColumns+", key, value, created_day, closed_day", labelDayRollupKeyMatch
	case r.labeled:
		table, columns, match = "incident_label_rollup", rollupKeyColumns+", key, value", labelRollupKeyMatch
	case r.daily:
		table, columns, match = "incident_day_rollup", rollupKeyColumns+", created_day, closed_day", dayRollupKeyMatch
	}
	args := r.args(teamID)
	p := len(args)
	var n, first, update int64
	var closed sql.NullInt64
	var err error
	// incident_day_rollup's first_update is a lower bound of its row's last updates, at or above
	// the row's day of creation (an incident's updates only grow from its creation): an arrival
	// below it lowers it; a departure leaves it, so that no write reads the row's incidents again
	// (docs/decisions.md, "first_update is a lower bound").
	dayColumns, dayValues, dayKeep := "", "", ""
	if table == "incident_day_rollup" {
		dayColumns, dayValues = ", first_update", ", $"+strconv.Itoa(p+5)
		dayKeep = `,
				first_update = CASE WHEN excluded.first_update < ` + table + `.first_update
					THEN excluded.first_update ELSE ` + table + `.first_update END`
	}
	if delta.arrived {
		values := append(args, delta.n, delta.first, delta.closed, delta.update)
		if dayColumns != "" {
			values = append(values, delta.firstUpdate)
		}
		err = tx.QueryRowContext(ctx, `INSERT INTO `+table+` (team_id, `+columns+`, n, first_created, last_closed, last_update`+dayColumns+`)
			VALUES (`+placeholders(1, p+4)+dayValues+`)
			ON CONFLICT (team_id, `+columns+`) DO UPDATE SET n = `+table+`.n + excluded.n,
				first_created = CASE WHEN excluded.first_created < `+table+`.first_created
					THEN excluded.first_created ELSE `+table+`.first_created END,
				last_closed = CASE WHEN `+table+`.last_closed IS NULL OR excluded.last_closed > `+table+`.last_closed
					THEN COALESCE(excluded.last_closed, `+table+`.last_closed) ELSE `+table+`.last_closed END,
				last_update = CASE WHEN excluded.last_update > `+table+`.last_update
					THEN excluded.last_update ELSE `+table+`.last_update END`+dayKeep+`
			RETURNING n, first_created, last_closed, last_update`,
			values...).Scan(&n, &first, &closed, &update)
	} else {
		err = tx.QueryRowContext(ctx, `UPDATE `+table+` SET n = n + $`+strconv.Itoa(p+1)+` WHERE team_id = $1 AND `+match+`
			RETURNING n, first_created, last_closed, last_update`, append(args, delta.n)...).Scan(&n, &first, &closed, &update)
	}
	if err != nil {
		return err
	}
	if n <= 0 {
		_, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE team_id = $1 AND `+match, args...)
		return err
	}
	var heldFirst, heldClosed, heldUpdate bool
	for _, e := range delta.departed {
		heldFirst = heldFirst || e.created == first
		heldUpdate = heldUpdate || e.update == update
		heldClosed = heldClosed || (e.closed.Valid && closed.Valid && e.closed.Int64 == closed.Int64)
	}
	if !heldFirst && !heldClosed && !heldUpdate {
		return nil
	}
	// Each extreme that left is found again among the row's own incidents: the first creation
	// and the last state update walk an index in that order to the first incident of the row (one
	// seek for incident_rollup; for a label's row, to the first that carries the label); the last
	// close (an incident closed before it left) reads the row's incidents.
	inRow := ` FROM incidents i WHERE i.team_id = $1 AND ` + rollupKeyMatch
	find := args
	if r.labeled {
		inRow += ` AND EXISTS (SELECT 1 FROM incident_labels l WHERE l.team_id = $1 AND l.key = $11 AND l.value = $12
			AND l.incident_id = i.id)`
	}
	if r.daily {
		// the row's day of the rollup key's incidents in createdAt order (incidents_by_rollup);
		// the days follow the label's key and value on a label's row
		created, closed, next := "$11", "$12", "$13"
		if r.labeled {
			created, closed, next = "$13", "$14", "$15"
		}
		inRow += ` AND i.created_at >= ` + created + ` AND i.created_at < ` + next + `
			AND COALESCE(i.closed_at - i.closed_at % ` + strconv.Itoa(dayMicros) + `, ` + strconv.Itoa(openDay) + `) = ` + closed
		find = append(append([]any(nil), args...), r.createdDay+dayMicros)
	}
	byCreated, byUpdated := inRow, inRow
	if tx.Engine == db.SQLite {
		byCreated = strings.Replace(inRow, "incidents i", "incidents i INDEXED BY incidents_by_rollup", 1)
		byUpdated = strings.Replace(inRow, "incidents i", "incidents i INDEXED BY incidents_by_severity", 1)
	}
	lastUpdate := `SELECT i.last_state_update_time` + byUpdated + ` ORDER BY i.last_state_update_time DESC LIMIT 1`
	if heldFirst {
		if err := tx.QueryRowContext(ctx, `SELECT i.created_at`+byCreated+` ORDER BY i.created_at LIMIT 1`, find...).Scan(&first); err != nil {
			return err
		}
	}
	if heldUpdate && r.daily {
		if update, err = dayLastUpdate(ctx, tx, r, find); err != nil {
			return err
		}
	} else if heldUpdate {
		if err := tx.QueryRowContext(ctx, lastUpdate, find...).Scan(&update); err != nil {
			return err
		}
	}
	if heldClosed {
		if err := tx.QueryRowContext(ctx, `SELECT MAX(i.closed_at)`+byCreated, find...).Scan(&closed); err != nil {
			return err
		}
	}
	p = len(args)
	_, err = tx.ExecContext(ctx, `UPDATE `+table+` SET first_created = $`+strconv.Itoa(p+1)+`, last_closed = $`+strconv.Itoa(p+2)+
		`, last_update = $`+strconv.Itoa(p+3)+` WHERE team_id = $1 AND `+match, append(args, first, closed, update)...)
	return err
}

// dayProbe is how many of a rollup key's latest updates dayLastUpdate looks through before it
// reads the whole day (64; tests set 0 to read every day whole).
var dayProbe = func() *atomic.Int64 { var n atomic.Int64; n.Store(64); return &n }()

// dayLastUpdate finds again the last state update of a day row (of incident_day_rollup, or of
// incident_label_day_rollup when r is labeled) whose holder left; find holds the row's args
// and the next day's start. The key's latest updates come first (a walk of
// incidents_by_severity, which has the key, then the update, and carries the times): the
// latest of them that is in the row is the row's, which is where an incident acknowledged or
// assigned soon after it came in finds it. Otherwise the row is read whole: a day row's
// incidents in createdAt order (incidents_by_rollup), a label's day row's label rows
// (incident_labels_by_rollup, whose rows copy the incident's key and times).
func dayLastUpdate(ctx context.Context, tx *db.Tx, r rollupRow, find []any) (int64, error) {
	created, closed, next := "$11", "$12", "$13"
	if r.labeled {
		created, closed, next = "$13", "$14", "$15"
	}
	inDay := ` AND t.created_at >= ` + created + ` AND t.created_at < ` + next + `
		AND COALESCE(t.closed_at - t.closed_at % ` + strconv.Itoa(dayMicros) + `, ` + strconv.Itoa(openDay) + `) = ` + closed
	latest, whole := "incidents i", "incidents t"
	if tx.Engine == db.SQLite {
		latest += " INDEXED BY incidents_by_severity"
		whole += " INDEXED BY incidents_by_rollup"
	}
	carries := ""
	if r.labeled {
		carries = ` AND EXISTS (SELECT 1 FROM incident_labels l WHERE l.team_id = $1 AND l.key = $11 AND l.value = $12
			AND l.incident_id = t.id)`
		whole = "incident_labels t"
		if tx.Engine == db.SQLite {
			whole += " INDEXED BY incident_labels_by_rollup"
		}
	}
	var update sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(t.last_state_update_time) FROM (SELECT i.id, i.created_at, i.closed_at,
		i.last_state_update_time FROM `+latest+` WHERE i.team_id = $1 AND `+rollupKeyMatch+`
		ORDER BY i.last_state_update_time DESC LIMIT `+strconv.FormatInt(dayProbe.Load(), 10)+`) t WHERE 1 = 1`+inDay+carries,
		find...).Scan(&update); err != nil {
		return 0, err
	}
	if update.Valid {
		return update.Int64, nil
	}
	rowMatch := rollupKeyMatch
	if r.labeled {
		rowMatch = labelRollupKeyMatch
	}
	if err := tx.QueryRowContext(ctx, `SELECT MAX(t.last_state_update_time) FROM `+whole+` WHERE t.team_id = $1 AND `+rowMatch+inDay,
		find...).Scan(&update); err != nil {
		return 0, err
	}
	if !update.Valid {
		return 0, fmt.Errorf("day rollup row %v has no incidents left", r)
	}
	return update.Int64, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// closedTimeChanges are a transaction's changes to the closedAt of the team's incidents: per
// time, day of creation, contextual labels and name, the incidents that took it less those that
// left it. incident_closed_times (the number of distinct closedAt values among the team's
// incidents, which E18 grouped by closedAt counts its groups with), incident_closed_day_times
// (the same per day of creation and day of close), incident_closed_day_ties (the times shared by
// incidents created on different days, with each such day), incident_value_closed_times (per
// contextual label value and per name: the distinct times and the closed incidents) and
// incident_value_closed_ties (the times shared by incidents with different values of one label
// key, or different names, with each such value) are kept from them just before the commit.
type closedTimeChanges map[closedTimeChange]int64

// closedTimeChange is a closedAt value and the owner of the incidents that took or left it.
type closedTimeChange struct {
	at    int64
	owner closedTimeOwner
}

// closedTimeOwner is what the closed-time counts key incidents by besides the time: the UTC day
// of creation, the contextual labels (the JSON object stored) and the name, none of which ever
// changes.
type closedTimeOwner struct {
	createdDay       int64
	contextual, name string
}

// labelValue is one contextual label of an incident: its key and value.
type labelValue struct{ key, value string }

// closedValue is a row of incident_value_closed_times: a contextual label's key and value
// (field "label") or a name (field "name", key "").
type closedValue struct{ field, key, value string }

// closedValues are the rows of incident_value_closed_times that count an incident of owner.
func (o closedTimeOwner) closedValues() ([]closedValue, error) {
	labels, err := contextualLabels(o.contextual)
	if err != nil {
		return nil, err
	}
	out := make([]closedValue, 0, len(labels)+1)
	for _, l := range labels {
		out = append(out, closedValue{"label", l.key, l.value})
	}
	return append(out, closedValue{"name", "", o.name}), nil
}

// closedValueChange is a transaction's change to a row of incident_value_closed_times.
type closedValueChange struct{ times, closed int64 }

type closedTimeChangesKey struct{ teamID int64 }

// moveClosedTime records that the closedAt of an incident changed from from.closed to
// to.closed (either may be null) when tx commits.
func moveClosedTime(ctx context.Context, tx *db.Tx, teamID int64, from, to rollupEntry) {
	if from.closed == to.closed {
		return
	}
	changes := tx.Local(closedTimeChangesKey{teamID}, func() any {
		c := closedTimeChanges{}
		tx.BeforeCommit(func() error { return c.write(ctx, tx, teamID) })
		return c
	}).(closedTimeChanges)
	owner := closedTimeOwner{dayOf(from.created), from.contextual, from.key.name}
	if from.closed.Valid {
		changes[closedTimeChange{from.closed.Int64, owner}]--
	}
	if to.closed.Valid {
		changes[closedTimeChange{to.closed.Int64, owner}]++
	}
}

// contextualLabels are the key and value pairs of a stored contextual labels object.
func contextualLabels(contextual string) ([]labelValue, error) {
	var labels map[string]string
	if err := json.Unmarshal([]byte(contextual), &labels); err != nil {
		return nil, fmt.Errorf("contextual labels %q: %w", contextual, err)
	}
	out := make([]labelValue, 0, len(labels))
	for k, v := range labels {
		out = append(out, labelValue{k, v})
	}
	return out, nil
}

// write locks the team's row of incident_closed_times first (every transaction that changes a
// closedAt of the team takes turns there, so that each sees the incidents the earlier ones
// committed), then, for each changed time in order, reads the days of creation, the contextual
// labels and the names of the incidents that have it now, tells from the changes which had it
// before the transaction, and adds the times that appeared less those that vanished: over the
// team, per day of creation (and the time's day), per label value and per name, and rewrites the
// time's list of days (of values of a key, of names) when it is or was shared across them.
func (c closedTimeChanges) write(ctx context.Context, tx *db.Tx, teamID int64) error {
	changed := map[int64]map[closedTimeOwner]int64{} // time → owner → change
	for k, n := range c {
		if n == 0 {
			continue
		}
		if changed[k.at] == nil {
			changed[k.at] = map[closedTimeOwner]int64{}
		}
		changed[k.at][k.owner] += n
	}
	if len(changed) == 0 {
		return nil
	}
	times := make([]int64, 0, len(changed))
	for t := range changed {
		times = append(times, t)
	}
	slices.Sort(times)
	var distinct int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO incident_closed_times (team_id, n) VALUES ($1, 0)
		ON CONFLICT (team_id) DO UPDATE SET n = incident_closed_times.n RETURNING n`, teamID).Scan(&distinct); err != nil {
		return fmt.Errorf("count closed times: %w", err)
	}
	from := "incidents"
	if tx.Engine == db.SQLite {
		from += " INDEXED BY incidents_by_closed"
	}
	var delta int64
	cells := map[[2]int64]int64{}                      // (day of creation, day of close) → change of its distinct times
	valueCells := map[closedValue]*closedValueChange{} // label value or name → change of its distinct times and closed incidents
	valueCell := func(v closedValue) *closedValueChange {
		if valueCells[v] == nil {
			valueCells[v] = &closedValueChange{}
		}
		return valueCells[v]
	}
	for _, t := range times {
		now := map[int64]int64{}             // day of creation → incidents with the time now
		valuesNow := map[closedValue]int64{} // label value or name → incidents with the time now
		rows, err := tx.QueryContext(ctx, `SELECT created_at, contextual_labels, name FROM `+from+` WHERE team_id = $1 AND closed_at = $2`, teamID, t)
		if err != nil {
			return fmt.Errorf("count closed times: %w", err)
		}
		for rows.Next() {
			var created int64
			var owner closedTimeOwner
			if err := rows.Scan(&created, &owner.contextual, &owner.name); err != nil {
				rows.Close()
				return err
			}
			now[dayOf(created)]++
			values, err := owner.closedValues()
			if err != nil {
				rows.Close()
				return err
			}
			for _, v := range values {
				valuesNow[v]++
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("count closed times: %w", err)
		}
		before := map[int64]int64{}
		valuesBefore := map[closedValue]int64{}
		var nowAll, beforeAll int64
		for d, n := range now {
			before[d] = n
			nowAll += n
		}
		for v, n := range valuesNow {
			valuesBefore[v] = n
		}
		for owner, n := range changed[t] {
			before[owner.createdDay] -= n
			values, err := owner.closedValues()
			if err != nil {
				return err
			}
			for _, v := range values {
				valuesBefore[v] -= n
				valueCell(v).closed += n
			}
		}
		daysNow, daysBefore := 0, 0
		for d, n := range before {
			if n > 0 {
				beforeAll += n
				daysBefore++
			}
			switch {
			case now[d] > 0 && n <= 0:
				cells[[2]int64{d, dayOf(t)}]++
			case now[d] <= 0 && n > 0:
				cells[[2]int64{d, dayOf(t)}]--
			}
		}
		for _, n := range now {
			if n > 0 {
				daysNow++
			}
		}
		switch {
		case nowAll > 0 && beforeAll <= 0:
			delta++
		case nowAll <= 0 && beforeAll > 0:
			delta--
		}
		if err := writeValueClosedTies(ctx, tx, teamID, t, valuesNow, valuesBefore, valueCell); err != nil {
			return err
		}
		if daysNow < 2 && daysBefore < 2 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM incident_closed_day_ties WHERE team_id = $1 AND closed_at = $2`, teamID, t); err != nil {
			return fmt.Errorf("count closed times: %w", err)
		}
		if daysNow < 2 {
			continue
		}
		days := make([]int64, 0, len(now))
		for d := range now {
			days = append(days, d)
		}
		slices.Sort(days)
		for _, d := range days {
			if _, err := tx.ExecContext(ctx, `INSERT INTO incident_closed_day_ties (team_id, closed_at, created_day, closed_day)
				VALUES ($1, $2, $3, $4)`, teamID, t, d, dayOf(t)); err != nil {
				return fmt.Errorf("count closed times: %w", err)
			}
		}
	}
	keys := make([][2]int64, 0, len(cells))
	for k, n := range cells {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, k := range keys {
		var n int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO incident_closed_day_times (team_id, created_day, closed_day, n)
			VALUES ($1, $2, $3, $4) ON CONFLICT (team_id, created_day, closed_day) DO UPDATE SET n = incident_closed_day_times.n + excluded.n
			RETURNING n`, teamID, k[0], k[1], cells[k]).Scan(&n); err != nil {
			return fmt.Errorf("count closed times: %w", err)
		}
		if n <= 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM incident_closed_day_times WHERE team_id = $1 AND created_day = $2
				AND closed_day = $3`, teamID, k[0], k[1]); err != nil {
				return fmt.Errorf("count closed times: %w", err)
			}
		}
	}
	if err := writeValueClosedTimes(ctx, tx, teamID, valueCells); err != nil {
		return err
	}
	if delta == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE incident_closed_times SET n = n + $2 WHERE team_id = $1`, teamID, delta); err != nil {
		return fmt.Errorf("count closed times: %w", err)
	}
	return nil
}

// writeValueClosedTies notes in valueCell the label values and names that the closed time t
// appeared in (valuesNow, the incidents with t per value now, against valuesBefore) or vanished
// from, and rewrites t's list of values of each label key (of names) that has or had it with
// more than one value.
func writeValueClosedTies(ctx context.Context, tx *db.Tx, teamID, t int64, valuesNow, valuesBefore map[closedValue]int64,
	valueCell func(closedValue) *closedValueChange) error {
	type valueKey struct{ field, key string }
	sharedNow, sharedBefore := map[valueKey][]string{}, map[valueKey]int{}
	for v, n := range valuesBefore {
		k := valueKey{v.field, v.key}
		if n > 0 {
			sharedBefore[k]++
		}
		if valuesNow[v] > 0 {
			sharedNow[k] = append(sharedNow[k], v.value)
		}
		switch {
		case valuesNow[v] > 0 && n <= 0:
			valueCell(v).times++
		case valuesNow[v] <= 0 && n > 0:
			valueCell(v).times--
		}
	}
	keys := make([]valueKey, 0, len(sharedNow))
	for k := range sharedNow {
		keys = append(keys, k)
	}
	for k := range sharedBefore {
		if _, ok := sharedNow[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b valueKey) int { return cmp.Or(cmp.Compare(a.field, b.field), cmp.Compare(a.key, b.key)) })
	for _, k := range keys {
		if len(sharedNow[k]) < 2 && sharedBefore[k] < 2 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM incident_value_closed_ties WHERE team_id = $1 AND field = $2 AND key = $3
			AND closed_at = $4`, teamID, k.field, k.key, t); err != nil {
			return fmt.Errorf("count closed times: %w", err)
		}
		if len(sharedNow[k]) < 2 {
			continue
		}
		values := sharedNow[k]
		slices.Sort(values)
		for _, v := range values {
			if _, err := tx.ExecContext(ctx, `INSERT INTO incident_value_closed_ties (team_id, field, key, closed_at, value)
				VALUES ($1, $2, $3, $4, $5)`, teamID, k.field, k.key, t, v); err != nil {
				return fmt.Errorf("count closed times: %w", err)
			}
		}
	}
	return nil
}

// writeValueClosedTimes adds the changes of incident_value_closed_times' rows, in key order; a
// row left without closed incidents is removed.
func writeValueClosedTimes(ctx context.Context, tx *db.Tx, teamID int64, changes map[closedValue]*closedValueChange) error {
	keys := make([]closedValue, 0, len(changes))
	for v, c := range changes {
		if c.times != 0 || c.closed != 0 {
			keys = append(keys, v)
		}
	}
	slices.SortFunc(keys, func(a, b closedValue) int {
		return cmp.Or(cmp.Compare(a.field, b.field), cmp.Compare(a.key, b.key), cmp.Compare(a.value, b.value))
	})
	for _, v := range keys {
		c := changes[v]
		var closed int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO incident_value_closed_times (team_id, field, key, value, n, closed)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (team_id, field, key, value) DO UPDATE SET n = incident_value_closed_times.n + excluded.n,
				closed = incident_value_closed_times.closed + excluded.closed
			RETURNING closed`, teamID, v.field, v.key, v.value, c.times, c.closed).Scan(&closed); err != nil {
			return fmt.Errorf("count closed times: %w", err)
		}
		if closed <= 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM incident_value_closed_times WHERE team_id = $1 AND field = $2 AND key = $3
				AND value = $4`, teamID, v.field, v.key, v.value); err != nil {
				return fmt.Errorf("count closed times: %w", err)
			}
		}
	}
	return nil
}
