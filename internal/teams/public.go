package teams

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/access"
	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// DefaultDailyQuota is a new team's daily quota, in quota units a day, when its creation names
// none (the public document's default).
const DefaultDailyQuota = 0.01

// The public teams operations answer the operator every team, and a team key its own team only:
// teams never see each other. visible says whether the caller may reach team id.
func visible(ctx context.Context, id int64) bool {
	return auth.IsOperator(ctx) || auth.PrincipalFrom(ctx).TeamID == id
}

type teamRow struct {
	id         int64
	name       string
	dailyQuota float64
}

func (t teamRow) wire() oas.TeamInfo {
	return oas.TeamInfo{TeamId: oas.NewOptTeamIdObject(oas.TeamIdObject{ID: oas.NewOptInt64(t.id)}),
		TeamName: oas.NewOptString(t.name), DailyQuota: oas.NewOptFloat64(t.dailyQuota)}
}

func getTeam(ctx context.Context, q db.Querier, id int64) (teamRow, error) {
	t := teamRow{id: id}
	err := q.QueryRowContext(ctx, `SELECT name, daily_quota FROM teams WHERE id = $1`, id).Scan(&t.name, &t.dailyQuota)
	return t, db.Translate(err)
}

// checkDailyQuota refuses a quota that is not a finite number of at least 0.
//
// Errors: Invalid naming dailyQuota.
func checkDailyQuota(q float64) error {
	if q < 0 || q != q || q > 1e15 {
		return apierror.Invalidf("dailyQuota: must be a number of quota units from 0 to 1e15 (got %v)", q)
	}
	return nil
}

// ListTeams answers the teams the caller may see: every team for the operator key (the first as
// defaultTeam), the caller's own team for a team key.
func (h *OperatorHandler) ListTeams(ctx context.Context) (*oas.TeamList, error) {
	q := h.db.Read()
	if !auth.IsOperator(ctx) {
		t, err := getTeam(ctx, q, auth.PrincipalFrom(ctx).TeamID)
		if err != nil {
			return nil, fmt.Errorf("read the caller's team: %w", err)
		}
		return &oas.TeamList{DefaultTeam: oas.NewOptTeamInfo(t.wire()), Teams: []oas.TeamInfo{t.wire()}}, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT id, name, daily_quota FROM teams ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list teams: %w", err)
	}
	defer rows.Close()
	out := &oas.TeamList{Teams: []oas.TeamInfo{}}
	for rows.Next() {
		var t teamRow
		if err := rows.Scan(&t.id, &t.name, &t.dailyQuota); err != nil {
			return nil, err
		}
		if len(out.Teams) == 0 {
			out.DefaultTeam = oas.NewOptTeamInfo(t.wire())
		}
		out.Teams = append(out.Teams, t.wire())
	}
	return out, rows.Err()
}

// CreateTeamInOrg creates a team, and makes each of teamAdminsEmail an active member of it in its
// built-in group of administrators (access.AddTeamAdmins). The team has no key.
//
// Errors: Invalid naming dailyQuota or teamAdminsEmail[i] (an address given twice, or not an
// email address); Conflict when a team of that name exists.
func (h *OperatorHandler) CreateTeamInOrg(ctx context.Context, req *oas.CreateTeamRequest) (*oas.CreateTeamResponse, error) {
	if strings.TrimSpace(req.TeamName) == "" {
		return nil, apierror.Invalidf("teamName: must contain a non-whitespace character")
	}
	quota := req.DailyQuota.Or(DefaultDailyQuota)
	if err := checkDailyQuota(quota); err != nil {
		return nil, err
	}
	if len(req.TeamAdminsEmail) > access.MaxTeamAdmins {
		return nil, apierror.Invalidf("teamAdminsEmail: at most %d addresses (got %d)", access.MaxTeamAdmins, len(req.TeamAdminsEmail))
	}
	var folded []string
	for i, email := range req.TeamAdminsEmail {
		field := "teamAdminsEmail[" + strconv.Itoa(i) + "]"
		if err := access.CheckEmail(field, email); err != nil {
			return nil, err
		}
		if slices.Contains(folded, strings.ToLower(email)) {
			return nil, apierror.Invalidf("%s: %q is named twice", field, email)
		}
		folded = append(folded, strings.ToLower(email))
	}
	var id int64
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		err := tx.QueryRowContext(ctx,
			`INSERT INTO teams (name, created_at, daily_quota) VALUES ($1, $2, $3) RETURNING id`,
			req.TeamName, tx.Now.UnixMicro(), quota).Scan(&id)
		if err != nil {
			return db.Translate(err)
		}
		tx.AuditTeam(id)
		tx.AuditResource(strconv.FormatInt(id, 10))
		return access.AddTeamAdmins(ctx, tx, id, req.TeamAdminsEmail)
	})
	if errors.Is(err, db.ErrConflict) {
		return nil, apierror.Conflictf("teamName: a team named %q already exists", req.TeamName)
	}
	if err != nil {
		return nil, err
	}
	return &oas.CreateTeamResponse{TeamId: oas.NewOptTeamIdObject(oas.TeamIdObject{ID: oas.NewOptInt64(id)})}, nil
}

// GetTeam answers one team the caller may see.
//
// Errors: NotFound for a team that does not exist or that the caller may not see.
func (h *OperatorHandler) GetTeam(ctx context.Context, params oas.GetTeamParams) (*oas.TeamInfo, error) {
	if !visible(ctx, params.TeamID) {
		return nil, noTeam(params.TeamID)
	}
	t, err := getTeam(ctx, h.db.Read(), params.TeamID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, noTeam(params.TeamID)
	}
	if err != nil {
		return nil, err
	}
	w := t.wire()
	return &w, nil
}

// UpdateTeam renames a team the caller may see or changes its daily quota.
//
// Errors: NotFound as GetTeam; Invalid naming teamName or dailyQuota; Conflict when another team
// has that name.
func (h *OperatorHandler) UpdateTeam(ctx context.Context, req *oas.UpdateTeamRequest, params oas.UpdateTeamParams) error {
	if !visible(ctx, params.TeamID) {
		return noTeam(params.TeamID)
	}
	name, renamed := req.TeamName.Get()
	if renamed && strings.TrimSpace(name) == "" {
		return apierror.Invalidf("teamName: must contain a non-whitespace character")
	}
	quota, requota := req.DailyQuota.Get()
	if requota {
		if err := checkDailyQuota(quota); err != nil {
			return err
		}
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		t, err := getTeam(ctx, tx, params.TeamID)
		if err != nil {
			return err
		}
		if renamed {
			t.name = name
		}
		if requota {
			t.dailyQuota = quota
		}
		tx.AuditTeam(t.id)
		res, err := tx.ExecContext(ctx, `UPDATE teams SET name = $2, daily_quota = $3 WHERE id = $1`, t.id, t.name, t.dailyQuota)
		return db.OneRow(res, err, "update team")
	})
	switch {
	case errors.Is(err, db.ErrNotFound):
		return noTeam(params.TeamID)
	case errors.Is(err, db.ErrConflict):
		return apierror.Conflictf("teamName: a team named %q already exists", name)
	}
	return err
}

// DeleteTeam removes a team the caller may see and everything it holds, in one transaction
// (db.DeleteTeam); its keys are refused from the next request on this server.
//
// Errors: NotFound as GetTeam.
func (h *OperatorHandler) DeleteTeam(ctx context.Context, params oas.DeleteTeamParams) error {
	if !visible(ctx, params.TeamID) {
		return noTeam(params.TeamID)
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		tx.AuditTeam(params.TeamID)
		return db.DeleteTeam(ctx, tx, params.TeamID)
	})
	if errors.Is(err, db.ErrNotFound) {
		return noTeam(params.TeamID)
	}
	if err == nil && h.authn != nil {
		h.authn.ForgetTeam(params.TeamID)
	}
	return err
}

func noTeam(id int64) error { return apierror.NotFoundf("team_id: no team %d", id) }
