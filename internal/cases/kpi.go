package cases

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	breachBreached  = string(oas.BreachedKPIBreachStatusBREACHSTATUSBREACHED)
	breachMitigated = string(oas.BreachedKPIBreachStatusBREACHSTATUSMITIGATED)
)

// DefaultKPIThresholds are the thresholds of a team that has none of its own, in seconds.
func DefaultKPIThresholds() oas.CaseKPIThresholds {
	return oas.CaseKPIThresholds{
		TimeToAcknowledge: oas.KPIThresholdsByPriority{P1: 900, P2: 1800, P3: 3600, P4: 14400, P5: 86400},
		TimeToResolve:     oas.KPIThresholdsByPriority{P1: 14400, P2: 28800, P3: 86400, P4: 259200, P5: 604800},
		TimeToUpdate:      oas.KPIThresholdsByPriority{P1: 1800, P2: 3600, P3: 14400, P4: 86400, P5: 259200},
	}
}

func kpiPriority(p oas.CasePriority) oas.KPIPriority {
	if rank(p) > 5 {
		return oas.KPIPriorityKPIPRIORITYUNSPECIFIED
	}
	return oas.KPIPriority("KPI_PRIORITY_P" + strconv.Itoa(rank(p)))
}

func loadThresholds(ctx context.Context, q db.Querier, teamID int64) (oas.CaseKPIThresholds, error) {
	var doc string
	err := q.QueryRowContext(ctx, `SELECT document FROM case_kpi_thresholds WHERE team_id = $1`, teamID).Scan(&doc)
	if db.IsNotFound(err) {
		return DefaultKPIThresholds(), nil
	}
	if err != nil {
		return oas.CaseKPIThresholds{}, fmt.Errorf("read KPI thresholds: %w", err)
	}
	var t oas.CaseKPIThresholds
	if err := t.UnmarshalJSON([]byte(doc)); err != nil {
		return oas.CaseKPIThresholds{}, fmt.Errorf("team %d KPI thresholds: %w", teamID, err)
	}
	return t, nil
}

// mitigate marks the case's BREACHED breaches of the given KPIs MITIGATED.
func mitigate(ctx context.Context, tx *db.Tx, teamID int64, caseID string, kpis ...oas.KPIType) error {
	args := []any{teamID, caseID, breachMitigated, breachBreached}
	marks := make([]string, len(kpis))
	for i, k := range kpis {
		args = append(args, string(k))
		marks[i] = "$" + strconv.Itoa(i+5)
	}
	_, err := tx.ExecContext(ctx, `UPDATE case_kpi_breaches SET status = $3
		WHERE team_id = $1 AND case_id = $2 AND status = $4 AND kpi_type IN (`+strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return fmt.Errorf("mitigate KPI breaches: %w", err)
	}
	return nil
}

// due is a breach that the clock says has happened.
type due struct {
	kpi       oas.KPIType
	since     int64
	threshold int64
}

// dueBreaches lists the breaches of an open case at now: time to acknowledge (from creation,
// while ACTIVE and never acknowledged), time to resolve (from creation) and time to update
// (from the last human change), each once its limit for the case's priority has passed; a KPI
// that l turns off for that priority is never due.
func dueBreaches(c *caseRow, l *kpiLimits, now int64) []due {
	if c.Status != oas.CaseStatusCASESTATUSACTIVE && c.Status != oas.CaseStatusCASESTATUSACKNOWLEDGED {
		return nil
	}
	var out []due
	check := func(kpi oas.KPIType, since int64) {
		secs, on := l.limit(kpi, c.Priority())
		if on && now >= since+secs*1e6 {
			out = append(out, due{kpi: kpi, since: since, threshold: secs})
		}
	}
	if c.Status == oas.CaseStatusCASESTATUSACTIVE && !c.AcknowledgedAt.Valid {
		check(oas.KPITypeKPITYPETIMETOACKNOWLEDGE, c.CreatedAt)
	}
	check(oas.KPITypeKPITYPETIMETORESOLVE, c.CreatedAt)
	check(oas.KPITypeKPITYPETIMETOUPDATE, c.LastUpdateAt)
	return out
}

type breachKey struct {
	team        int64
	caseID, kpi string
	since       int64
}

// EvaluateKPIs records every KPI breach that has happened by database.Now() and is not yet
// recorded (against each team's limits: teamLimits), each with its kpiBreached event (actor system, threshold "<seconds>s") in one
// transaction per case, and returns how many it recorded. A breach is recorded once: time to
// acknowledge and time to resolve once per case, time to update once per last human change.
// Replicas may run it at the same time; a breach another replica recorded first is skipped.
// breachedAt is the moment the threshold passed.
func EvaluateKPIs(ctx context.Context, database *db.DB) (int, error) {
	now := micros(database.Now())
	q := database.Read()
	open := `status IN ('CASE_STATUS_ACTIVE', 'CASE_STATUS_ACKNOWLEDGED')`
	rows, err := q.QueryContext(ctx, `SELECT `+caseColumns+` FROM cases WHERE `+open+` ORDER BY team_id, number`)
	if err != nil {
		return 0, fmt.Errorf("list open cases: %w", err)
	}
	var candidates []caseRow
	for rows.Next() {
		c, err := scanCase(rows)
		if err != nil {
			rows.Close()
			return 0, fmt.Errorf("list open cases: %w", err)
		}
		candidates = append(candidates, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("list open cases: %w", err)
	}
	recorded, err := recordedBreaches(ctx, q, open)
	if err != nil {
		return 0, err
	}
	limits := map[int64]kpiLimits{}
	count := 0
	for _, c := range candidates {
		l, ok := limits[c.TeamID]
		if !ok {
			if l, err = teamLimits(ctx, q, c.TeamID); err != nil {
				return count, err
			}
			limits[c.TeamID] = l
		}
		pending := false
		for _, d := range dueBreaches(&c, &l, now) {
			if !recorded[breachKey{c.TeamID, c.ID, string(d.kpi), d.since}] {
				pending = true
			}
		}
		if !pending {
			continue
		}
		n, err := recordBreaches(ctx, database, c.TeamID, c.ID, now)
		count += n
		if err != nil {
			return count, err
		}
	}
	return count, nil
}

func recordedBreaches(ctx context.Context, q db.Querier, open string) (map[breachKey]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT b.team_id, b.case_id, b.kpi_type, b.since_at
		FROM case_kpi_breaches b JOIN cases c ON c.team_id = b.team_id AND c.id = b.case_id
		WHERE c.`+open)
	if err != nil {
		return nil, fmt.Errorf("list breaches: %w", err)
	}
	defer rows.Close()
	out := map[breachKey]bool{}
	for rows.Next() {
		var k breachKey
		if err := rows.Scan(&k.team, &k.caseID, &k.kpi, &k.since); err != nil {
			return nil, fmt.Errorf("list breaches: %w", err)
		}
		out[k] = true
	}
	return out, rows.Err()
}

// recordBreaches locks one case, works out again what is due (the case may have changed since
// it was listed) and records what no one recorded yet.
func recordBreaches(ctx context.Context, database *db.DB, teamID int64, caseID string, now int64) (int, error) {
	n := 0
	err := database.InTx(ctx, func(tx *db.Tx) error {
		n = 0
		c, err := lockCaseByID(ctx, tx, teamID, caseID)
		if db.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		l, err := teamLimits(ctx, tx, teamID)
		if err != nil {
			return err
		}
		for _, d := range dueBreaches(&c, &l, now) {
			breachedAt := d.since + d.threshold*1e6
			var id string
			err := tx.QueryRowContext(ctx, `INSERT INTO case_kpi_breaches (team_id, id, case_id,
				kpi_type, since_at, case_priority, status, breached_at, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
				ON CONFLICT (team_id, case_id, kpi_type, since_at) DO NOTHING RETURNING id`,
				teamID, tx.NewID(), caseID, string(d.kpi), d.since, string(c.Priority()), breachBreached,
				breachedAt, micros(tx.Now)).Scan(&id)
			if db.IsNotFound(err) {
				continue // recorded before
			}
			if err != nil {
				return fmt.Errorf("record KPI breach: %w", err)
			}
			data := oas.CaseEventData{KpiBreached: oas.NewOptCaseEventDataKpiBreached(oas.CaseEventDataKpiBreached{
				KpiType:   oas.NewOptKPIType(d.kpi),
				Priority:  oas.NewOptCasePriority(c.Priority()),
				Threshold: oas.NewOptString(strconv.FormatInt(d.threshold, 10) + "s"),
			})}
			if _, err := appendEvent(ctx, tx, teamID, caseID, systemActor(), data, fromMicros(breachedAt)); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// ------------------------------------------------------------------------------ operator

func (h *CaseHandler) teamExists(ctx context.Context, q db.Querier, teamID int64) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM teams WHERE id = $1`, teamID).Scan(&one)
	if db.IsNotFound(err) {
		return apierror.NotFoundf("team_id: no team %d", teamID)
	}
	if err != nil {
		return fmt.Errorf("read team: %w", err)
	}
	return nil
}

// AdminGetCaseKPIs returns the team's case KPI thresholds, the defaults when it has none.
//
// Errors: NotFound when there is no such team.
func (h *CaseHandler) AdminGetCaseKPIs(ctx context.Context, params oas.AdminGetCaseKPIsParams) (*oas.CaseKPIThresholds, error) {
	q := h.db.Read()
	if err := h.teamExists(ctx, q, params.TeamID); err != nil {
		return nil, err
	}
	t, err := loadThresholds(ctx, q, params.TeamID)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// AdminSetCaseKPIs replaces the team's case KPI thresholds; the next evaluation uses them.
// Breaches already recorded stay as they are.
//
// Errors: NotFound when there is no such team.
func (h *CaseHandler) AdminSetCaseKPIs(ctx context.Context, req *oas.CaseKPIThresholds, params oas.AdminSetCaseKPIsParams) (*oas.CaseKPIThresholds, error) {
	doc, err := req.MarshalJSON()
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := h.teamExists(ctx, tx, params.TeamID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO case_kpi_thresholds (team_id, document, updated_at)
			VALUES ($1, $2, $3) ON CONFLICT (team_id) DO UPDATE
			SET document = excluded.document, updated_at = excluded.updated_at`,
			params.TeamID, string(doc), micros(tx.Now))
		if err != nil {
			return fmt.Errorf("store KPI thresholds: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return req, nil
}
