package access

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

type scanner interface{ Scan(dest ...any) error }

// ---- members

// member is a member of a team as stored.
type member struct {
	accountID int64
	userID    string
	username  string
	firstName string
	lastName  string
	// status is statusActive or statusInactive.
	status string
	// expiresAt ends a temporary access; zero for a permanent one.
	expiresAt time.Time
	extra     memberExtra
}

// memberExtra is what a member holds that no query reads, stored as the row's document.
type memberExtra struct {
	LoginModes     []string `json:"allowedLoginMode,omitempty"`
	OnboardingMode string   `json:"onboardingMode,omitempty"`
}

// activeAt reports whether the member may act at now: active, and not past a temporary access.
func (m member) activeAt(now time.Time) bool {
	return m.status == statusActive && (m.expiresAt.IsZero() || now.Before(m.expiresAt))
}

const memberColumns = `account_id, user_id, username, first_name, last_name, status, expires_at, document`

func scanMember(row scanner) (member, error) {
	var m member
	var expires int64
	var doc string
	if err := row.Scan(&m.accountID, &m.userID, &m.username, &m.firstName, &m.lastName, &m.status, &expires, &doc); err != nil {
		return m, db.Translate(err)
	}
	if expires != 0 {
		m.expiresAt = time.UnixMicro(expires).UTC()
	}
	if err := json.Unmarshal([]byte(doc), &m.extra); err != nil {
		return m, fmt.Errorf("member %d document: %w", m.accountID, err)
	}
	return m, nil
}

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// insertMember stores m; a username the team has (in any case) is db.ErrConflict.
func insertMember(ctx context.Context, tx *db.Tx, teamID int64, m member) error {
	doc, _ := json.Marshal(m.extra)
	_, err := tx.ExecContext(ctx,
		`INSERT INTO team_members (team_id, account_id, user_id, username, username_folded, first_name, last_name,
		                           status, expires_at, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
		teamID, m.accountID, m.userID, m.username, strings.ToLower(m.username), m.firstName, m.lastName,
		m.status, micros(m.expiresAt), string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert member: %w", db.Translate(err))
	}
	return nil
}

// updateMember rewrites m; db.ErrConflict for a username the team has, db.ErrNotFound when there
// is no such member.
func updateMember(ctx context.Context, tx *db.Tx, teamID int64, m member) error {
	doc, _ := json.Marshal(m.extra)
	res, err := tx.ExecContext(ctx,
		`UPDATE team_members SET username = $3, username_folded = $4, first_name = $5, last_name = $6,
		        status = $7, expires_at = $8, document = $9, updated_at = $10
		  WHERE team_id = $1 AND account_id = $2`,
		teamID, m.accountID, m.username, strings.ToLower(m.username), m.firstName, m.lastName,
		m.status, micros(m.expiresAt), string(doc), tx.Now.UnixMicro())
	return db.OneRow(res, err, "update member")
}

// getMember returns the team's member by account id; db.ErrNotFound when there is none.
func getMember(ctx context.Context, q db.Querier, teamID, accountID int64) (member, error) {
	return scanMember(q.QueryRowContext(ctx,
		`SELECT `+memberColumns+` FROM team_members WHERE team_id = $1 AND account_id = $2`, teamID, accountID))
}

// memberByUserID returns the team's member by userId; db.ErrNotFound when there is none.
func memberByUserID(ctx context.Context, q db.Querier, teamID int64, userID string) (member, error) {
	return scanMember(q.QueryRowContext(ctx,
		`SELECT `+memberColumns+` FROM team_members WHERE team_id = $1 AND user_id = $2`, teamID, userID))
}

// countMembers counts the team's members.
func countMembers(ctx context.Context, q db.Querier, teamID int64) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM team_members WHERE team_id = $1`, teamID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count members: %w", err)
	}
	return n, nil
}

// memberFilter selects members in searchMembers.
type memberFilter struct {
	usernamePart string // lower case; "" matches all
	status       string // statusActive, statusInactive, or "" for both
	now          time.Time
}

// searchMembers returns the team's members that f selects, by account id, the page of limit
// from offset, and how many f selects in all. A member whose temporary access has expired counts
// as inactive.
func searchMembers(ctx context.Context, q db.Querier, teamID int64, f memberFilter, offset, limit int64) ([]member, int64, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT `+memberColumns+` FROM team_members WHERE team_id = $1 ORDER BY account_id`, teamID)
	if err != nil {
		return nil, 0, fmt.Errorf("search members: %w", err)
	}
	defer rows.Close()
	var page []member
	var total int64
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, 0, err
		}
		if f.usernamePart != "" && !strings.Contains(strings.ToLower(m.username), f.usernamePart) {
			continue
		}
		if f.status != "" && (f.status == statusActive) != m.activeAt(f.now) {
			continue
		}
		if total >= offset && int64(len(page)) < limit {
			page = append(page, m)
		}
		total++
	}
	return page, total, rows.Err()
}

// ---- groups

// group is a group of a team as stored, with its members' account ids.
type group struct {
	id          int64
	name        string
	description string
	externalID  string
	groupType   string
	origin      string
	roleID      int64  // 0: no role
	scopeID     string // "": no scope
	createdAt   time.Time
	updatedAt   time.Time
	members     []int64
}

const groupColumns = `id, name, description, external_id, group_type, origin, role_id, scope_id, created_at, updated_at`

func scanGroup(row scanner) (group, error) {
	var g group
	var created, updated int64
	if err := row.Scan(&g.id, &g.name, &g.description, &g.externalID, &g.groupType, &g.origin, &g.roleID, &g.scopeID,
		&created, &updated); err != nil {
		return g, db.Translate(err)
	}
	g.createdAt, g.updatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return g, nil
}

// insertGroup stores g and its members; a name the team has is db.ErrConflict.
func insertGroup(ctx context.Context, tx *db.Tx, teamID int64, g group) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO team_groups (team_id, id, name, description, external_id, group_type, origin, role_id, scope_id, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
		teamID, g.id, g.name, g.description, g.externalID, g.groupType, g.origin, g.roleID, g.scopeID, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert group: %w", db.Translate(err))
	}
	return setGroupMembers(ctx, tx, teamID, g.id, g.members)
}

// updateGroup rewrites g and its members; db.ErrConflict for a name the team has.
func updateGroup(ctx context.Context, tx *db.Tx, teamID int64, g group) error {
	res, err := tx.ExecContext(ctx,
		`UPDATE team_groups SET name = $3, description = $4, external_id = $5, group_type = $6, role_id = $7,
		        scope_id = $8, updated_at = $9
		  WHERE team_id = $1 AND id = $2`,
		teamID, g.id, g.name, g.description, g.externalID, g.groupType, g.roleID, g.scopeID, tx.Now.UnixMicro())
	if err := db.OneRow(res, err, "update group"); err != nil {
		return err
	}
	return setGroupMembers(ctx, tx, teamID, g.id, g.members)
}

func setGroupMembers(ctx context.Context, tx *db.Tx, teamID, groupID int64, accounts []int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM team_group_members WHERE team_id = $1 AND group_id = $2`, teamID, groupID); err != nil {
		return fmt.Errorf("clear group members: %w", err)
	}
	for _, a := range accounts {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO team_group_members (team_id, group_id, account_id) VALUES ($1, $2, $3)`, teamID, groupID, a); err != nil {
			return fmt.Errorf("add group member: %w", err)
		}
	}
	return nil
}

// groupMembers returns the account ids of the group's members, ascending.
func groupMembers(ctx context.Context, q db.Querier, teamID, groupID int64) ([]int64, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT account_id FROM team_group_members WHERE team_id = $1 AND group_id = $2 ORDER BY account_id`, teamID, groupID)
	if err != nil {
		return nil, fmt.Errorf("group members: %w", err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var a int64
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// getGroup returns the team's group with its members; db.ErrNotFound when there is none.
func getGroup(ctx context.Context, q db.Querier, teamID, id int64) (group, error) {
	return groupWhere(ctx, q, `team_id = $1 AND id = $2`, teamID, id)
}

// groupByName returns the team's group of that name with its members; db.ErrNotFound when none.
func groupByName(ctx context.Context, q db.Querier, teamID int64, name string) (group, error) {
	return groupWhere(ctx, q, `team_id = $1 AND name = $2`, teamID, name)
}

func groupWhere(ctx context.Context, q db.Querier, where string, teamID int64, arg any) (group, error) {
	g, err := scanGroup(q.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM team_groups WHERE `+where, teamID, arg))
	if err != nil {
		return g, err
	}
	g.members, err = groupMembers(ctx, q, teamID, g.id)
	return g, err
}

// listGroups returns the team's groups by id, with their members.
func listGroups(ctx context.Context, q db.Querier, teamID int64) ([]group, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+groupColumns+` FROM team_groups WHERE team_id = $1 ORDER BY id`, teamID)
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	var out []group
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, g)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].members, err = groupMembers(ctx, q, teamID, out[i].id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// deleteGroup deletes the team's group and its membership; db.ErrNotFound when there is none.
func deleteGroup(ctx context.Context, tx *db.Tx, teamID, id int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM team_group_members WHERE team_id = $1 AND group_id = $2`, teamID, id); err != nil {
		return fmt.Errorf("delete group members: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM team_groups WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete group")
}

// groupsWhere returns the names of the team's groups whose column equals value, by name.
func groupsWhere(ctx context.Context, q db.Querier, teamID int64, column string, value any) ([]string, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT name FROM team_groups WHERE team_id = $1 AND `+column+` = $2 ORDER BY name`, teamID, value)
	if err != nil {
		return nil, fmt.Errorf("groups by %s: %w", column, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, "group "+n)
	}
	return out, rows.Err()
}

// memberRoles returns the role ids of the groups the member (account id) is in.
func memberRoles(ctx context.Context, q db.Querier, teamID, accountID int64) ([]int64, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT g.role_id FROM team_groups g
		   JOIN team_group_members m ON m.team_id = g.team_id AND m.group_id = g.id
		  WHERE g.team_id = $1 AND m.account_id = $2 AND g.role_id <> 0
		  ORDER BY g.id`, teamID, accountID)
	if err != nil {
		return nil, fmt.Errorf("member roles: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ---- scopes

// scope is a scope of a team as stored; its document holds the fields.
type scope struct {
	ID                string        `json:"id"`
	DisplayName       string        `json:"displayName"`
	Description       string        `json:"description,omitempty"`
	DefaultExpression string        `json:"defaultExpression"`
	Filters           []scopeFilter `json:"filters"`
}

type scopeFilter struct {
	EntityType string `json:"entityType"`
	Expression string `json:"expression"`
}

func scanScope(row scanner) (scope, error) {
	var doc string
	if err := row.Scan(&doc); err != nil {
		return scope{}, db.Translate(err)
	}
	var s scope
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		return s, fmt.Errorf("scope document: %w", err)
	}
	return s, nil
}

// putScope stores s, a new scope or (replace) over the stored one; a display name the team has is
// db.ErrConflict, and replacing a scope the team does not have is db.ErrNotFound.
func putScope(ctx context.Context, tx *db.Tx, teamID int64, s scope, replace bool) error {
	doc, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if replace {
		res, err := tx.ExecContext(ctx,
			`UPDATE team_scopes SET display_name = $3, document = $4, updated_at = $5 WHERE team_id = $1 AND id = $2`,
			teamID, s.ID, s.DisplayName, string(doc), tx.Now.UnixMicro())
		return db.OneRow(res, err, "update scope")
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO team_scopes (team_id, id, display_name, document, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
		teamID, s.ID, s.DisplayName, string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert scope: %w", db.Translate(err))
	}
	return nil
}

// getScope returns the team's scope; db.ErrNotFound when there is none.
func getScope(ctx context.Context, q db.Querier, teamID int64, id string) (scope, error) {
	return scanScope(q.QueryRowContext(ctx, `SELECT document FROM team_scopes WHERE team_id = $1 AND id = $2`, teamID, id))
}

// listScopes returns the team's scopes, oldest first.
func listScopes(ctx context.Context, q db.Querier, teamID int64) ([]scope, error) {
	rows, err := q.QueryContext(ctx, `SELECT document FROM team_scopes WHERE team_id = $1 ORDER BY created_at, id`, teamID)
	if err != nil {
		return nil, fmt.Errorf("list scopes: %w", err)
	}
	defer rows.Close()
	out := []scope{}
	for rows.Next() {
		s, err := scanScope(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// deleteScope deletes the team's scope; db.ErrNotFound when there is none.
func deleteScope(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM team_scopes WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete scope")
}
