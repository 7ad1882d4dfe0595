package ai

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// lockTeam serialises the writers of the team's AI resources until the transaction ends
// (db.Tx.Serialize), so that the count bounds and the links' references hold until commit.
func lockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.ai:%d", teamID))
}

// companyID is the team's id as the answers' companyId gives it.
func companyID(teamID int64) string { return strconv.FormatInt(teamID, 10) }

type scanner interface{ Scan(dest ...any) error }

// application is one stored AI application.
type application struct {
	ID          string
	Application string
	Subsystem   string // "" for none
	Guardrails  bool
	Created     time.Time
	Updated     time.Time
}

// answer is the application as the operations answer it.
func (a application) answer(teamID int64) oas.AiApplication {
	out := oas.AiApplication{
		ID: oas.NewOptAiUuid(oas.AiUuid(a.ID)), Application: oas.NewOptString(a.Application),
		CompanyId: oas.NewOptString(companyID(teamID)), GuardrailsIntegrated: oas.NewOptBool(a.Guardrails),
		CreatedAt: oas.NewOptDateTime(a.Created), UpdatedAt: oas.NewOptDateTime(a.Updated),
	}
	if a.Subsystem != "" {
		out.Subsystem = oas.NewOptString(a.Subsystem)
	}
	return out
}

const selectApplication = `SELECT id, application, subsystem, guardrails_integrated, created_at, updated_at FROM ai_applications`

func scanApplication(row scanner) (application, error) {
	var a application
	var guardrails, created, updated int64
	if err := row.Scan(&a.ID, &a.Application, &a.Subsystem, &guardrails, &created, &updated); err != nil {
		return a, db.Translate(err)
	}
	a.Guardrails = guardrails != 0
	a.Created, a.Updated = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return a, nil
}

// getApplication returns the team's application id; db.ErrNotFound when there is none.
func getApplication(ctx context.Context, q db.Querier, teamID int64, id string) (application, error) {
	return scanApplication(q.QueryRowContext(ctx, selectApplication+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// applicationByName returns the team's application of that name and subsystem; db.ErrNotFound
// when there is none.
func applicationByName(ctx context.Context, q db.Querier, teamID int64, name, subsystem string) (application, error) {
	return scanApplication(q.QueryRowContext(ctx,
		selectApplication+` WHERE team_id = $1 AND application = $2 AND subsystem = $3`, teamID, name, subsystem))
}

// listApplications returns the team's applications ordered by name, then subsystem.
func listApplications(ctx context.Context, q db.Querier, teamID int64) ([]application, error) {
	rows, err := q.QueryContext(ctx, selectApplication+` WHERE team_id = $1 ORDER BY application, subsystem, id`, teamID)
	if err != nil {
		return nil, fmt.Errorf("list AI applications: %w", err)
	}
	defer rows.Close()
	var out []application
	for rows.Next() {
		a, err := scanApplication(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// bound is the most rows of one table a team may hold.
type bound struct {
	table, noun string
	max         int
}

var (
	applicationsBound = bound{"ai_applications", "AI applications", MaxApplications}
	evaluationsBound  = bound{"ai_evaluations", "AI evaluations", MaxEvaluations}
	customBound       = bound{"ai_custom_evaluations", "AI custom evaluations", MaxCustomEvaluations}
)

// roomFor answers LimitExceeded when the team holds b.max rows of b.table already.
func roomFor(ctx context.Context, tx *db.Tx, teamID int64, b bound) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+b.table+` WHERE team_id = $1`, teamID).Scan(&n); err != nil {
		return fmt.Errorf("count %s: %w", b.table, err)
	}
	if n >= b.max {
		return apierror.LimitExceededf("the team holds %d %s, the most it may; delete one first", n, b.noun)
	}
	return nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// insertApplication stores a new application, created and updated now.
func insertApplication(ctx context.Context, tx *db.Tx, teamID int64, a application) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO ai_applications (team_id, id, application, subsystem, guardrails_integrated, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, teamID, a.ID, a.Application, a.Subsystem, boolInt(a.Guardrails), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert AI application: %w", db.Translate(err))
	}
	return nil
}

// updateApplication replaces the name, subsystem and guardrails flag of the application a.ID,
// updated now.
func updateApplication(ctx context.Context, tx *db.Tx, teamID int64, a application) error {
	res, err := tx.ExecContext(ctx, `UPDATE ai_applications SET application = $3, subsystem = $4, guardrails_integrated = $5, updated_at = $6
		WHERE team_id = $1 AND id = $2`, teamID, a.ID, a.Application, a.Subsystem, boolInt(a.Guardrails), tx.Now.UnixMicro())
	return db.OneRow(res, err, "update AI application")
}

// deleteApplication removes the application and its links to custom evaluations.
func deleteApplication(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM ai_custom_evaluation_links WHERE team_id = $1 AND application_id = $2`, teamID, id); err != nil {
		return fmt.Errorf("unlink AI application: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM ai_applications WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete AI application")
}

// pricing is the team's stored model pricing.
type pricing struct {
	ID     string
	Prices oas.AiModelPricingPrices
}

// getPricing returns the team's pricing; db.ErrNotFound when it has none.
func getPricing(ctx context.Context, q db.Querier, teamID int64) (pricing, error) {
	var p pricing
	var doc string
	err := q.QueryRowContext(ctx, `SELECT id, document FROM ai_model_pricing WHERE team_id = $1`, teamID).Scan(&p.ID, &doc)
	if err != nil {
		return p, db.Translate(err)
	}
	p.Prices = oas.AiModelPricingPrices{}
	if err := p.Prices.UnmarshalJSON([]byte(doc)); err != nil {
		return p, fmt.Errorf("AI model pricing document: %w", err)
	}
	return p, nil
}

// putPricing stores p as the team's pricing, replacing the one it has.
func putPricing(ctx context.Context, tx *db.Tx, teamID int64, p pricing) error {
	doc, err := p.Prices.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO ai_model_pricing (team_id, id, document, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (team_id) DO UPDATE SET id = excluded.id, document = excluded.document, updated_at = excluded.updated_at`,
		teamID, p.ID, string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("store AI model pricing: %w", err)
	}
	return nil
}

// deletePricing removes the team's pricing; db.ErrNotFound when it has none.
func deletePricing(ctx context.Context, tx *db.Tx, teamID int64) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM ai_model_pricing WHERE team_id = $1`, teamID)
	return db.OneRow(res, err, "delete AI model pricing")
}

// evaluation is one stored AI evaluation: Doc holds id, application, subsystem, config, target,
// threshold and isEnabled.
type evaluation struct {
	Doc       oas.AiEvaluation
	Type      string
	CreatedBy string
	Created   time.Time
	Updated   time.Time
}

// answer is the evaluation as the operations answer it.
func (e evaluation) answer(teamID int64) oas.AiEvaluation {
	out := e.Doc
	out.CompanyId = oas.NewOptString(companyID(teamID))
	out.CreatedAt, out.UpdatedAt = oas.NewOptDateTime(e.Created), oas.NewOptDateTime(e.Updated)
	if e.CreatedBy != "" {
		out.CreatedBy = oas.NewOptAiUuid(oas.AiUuid(e.CreatedBy))
	}
	return out
}

const selectEvaluation = `SELECT document, evaluation_type, created_by, created_at, updated_at FROM ai_evaluations`

func scanEvaluation(row scanner) (evaluation, error) {
	var e evaluation
	var doc string
	var created, updated int64
	if err := row.Scan(&doc, &e.Type, &e.CreatedBy, &created, &updated); err != nil {
		return e, db.Translate(err)
	}
	if err := e.Doc.UnmarshalJSON([]byte(doc)); err != nil {
		return e, fmt.Errorf("AI evaluation document: %w", err)
	}
	e.Created, e.Updated = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return e, nil
}

// getEvaluation returns the team's evaluation id; db.ErrNotFound when there is none.
func getEvaluation(ctx context.Context, q db.Querier, teamID int64, id string) (evaluation, error) {
	return scanEvaluation(q.QueryRowContext(ctx, selectEvaluation+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// evaluationFilter selects evaluations: each field that is not empty must match.
type evaluationFilter struct {
	Application, Subsystem, Type string
	Limit, Offset                int64 // Limit 0: every one
}

// listEvaluations returns the team's evaluations that f selects, oldest first.
func listEvaluations(ctx context.Context, q db.Querier, teamID int64, f evaluationFilter) ([]evaluation, error) {
	query, args := selectEvaluation+` WHERE team_id = $1`, []any{teamID}
	for _, c := range []struct{ column, value string }{
		{"application", f.Application}, {"subsystem", f.Subsystem}, {"evaluation_type", f.Type},
	} {
		if c.value != "" {
			args = append(args, c.value)
			query += fmt.Sprintf(` AND %s = $%d`, c.column, len(args))
		}
	}
	query += ` ORDER BY created_at, id`
	if f.Limit > 0 {
		args = append(args, f.Limit, f.Offset)
		query += fmt.Sprintf(` LIMIT $%d OFFSET $%d`, len(args)-1, len(args))
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list AI evaluations: %w", err)
	}
	defer rows.Close()
	var out []evaluation
	for rows.Next() {
		e, err := scanEvaluation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// putEvaluation stores e (new when exists is false), updated now; a new one is also created now.
func putEvaluation(ctx context.Context, tx *db.Tx, teamID int64, e evaluation, exists bool) error {
	doc, err := e.Doc.MarshalJSON()
	if err != nil {
		return err
	}
	id := string(e.Doc.ID.Value)
	app, sub := e.Doc.Application.Or(""), e.Doc.Subsystem.Or("")
	if exists {
		res, err := tx.ExecContext(ctx, `UPDATE ai_evaluations SET application = $3, subsystem = $4, evaluation_type = $5, document = $6, updated_at = $7
			WHERE team_id = $1 AND id = $2`, teamID, id, app, sub, e.Type, string(doc), tx.Now.UnixMicro())
		return db.OneRow(res, err, "update AI evaluation")
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO ai_evaluations (team_id, id, application, subsystem, evaluation_type, created_by, document, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, teamID, id, app, sub, e.Type, e.CreatedBy, string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert AI evaluation: %w", db.Translate(err))
	}
	return nil
}

// deleteEvaluation removes the team's evaluation id; db.ErrNotFound when there is none.
func deleteEvaluation(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM ai_evaluations WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete AI evaluation")
}

// getCustom returns the team's custom evaluation id with its links; db.ErrNotFound when there is
// none.
func getCustom(ctx context.Context, q db.Querier, teamID int64, id string) (oas.AiCustomEvaluation, error) {
	var doc string
	err := q.QueryRowContext(ctx, `SELECT document FROM ai_custom_evaluations WHERE team_id = $1 AND id = $2`, teamID, id).Scan(&doc)
	if err != nil {
		return oas.AiCustomEvaluation{}, db.Translate(err)
	}
	var c oas.AiCustomEvaluation
	if err := c.UnmarshalJSON([]byte(doc)); err != nil {
		return c, fmt.Errorf("AI custom evaluation document: %w", err)
	}
	links, err := linksOf(ctx, q, teamID, id)
	c.ApplicationIds = links
	return c, err
}

// linksOf returns the ids of the applications the custom evaluation is linked to, in order.
func linksOf(ctx context.Context, q db.Querier, teamID int64, id string) ([]oas.AiUuid, error) {
	rows, err := q.QueryContext(ctx, `SELECT application_id FROM ai_custom_evaluation_links WHERE team_id = $1 AND evaluation_id = $2 ORDER BY application_id`, teamID, id)
	if err != nil {
		return nil, fmt.Errorf("read AI custom evaluation links: %w", err)
	}
	defer rows.Close()
	out := []oas.AiUuid{}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		out = append(out, oas.AiUuid(a))
	}
	return out, rows.Err()
}

// listCustom returns the team's custom evaluations with their links, oldest first; only those
// linked to linkedTo when it is not empty.
func listCustom(ctx context.Context, q db.Querier, teamID int64, linkedTo string) ([]oas.AiCustomEvaluation, error) {
	query, args := `SELECT c.id, c.document FROM ai_custom_evaluations c WHERE c.team_id = $1 ORDER BY c.created_at, c.id`, []any{teamID}
	if linkedTo != "" {
		query = `SELECT c.id, c.document FROM ai_custom_evaluations c JOIN ai_custom_evaluation_links l
			ON l.team_id = c.team_id AND l.evaluation_id = c.id AND l.application_id = $2
			WHERE c.team_id = $1 ORDER BY c.created_at, c.id`
		args = append(args, linkedTo)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list AI custom evaluations: %w", err)
	}
	var out []oas.AiCustomEvaluation
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc); err != nil {
			rows.Close()
			return nil, err
		}
		var c oas.AiCustomEvaluation
		if err := c.UnmarshalJSON([]byte(doc)); err != nil {
			rows.Close()
			return nil, fmt.Errorf("AI custom evaluation document: %w", err)
		}
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	all, err := allLinks(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].ApplicationIds = append([]oas.AiUuid{}, all[string(out[i].ID.Value)]...)
	}
	return out, nil
}

// allLinks returns the team's links: the application ids of each custom evaluation, in order.
func allLinks(ctx context.Context, q db.Querier, teamID int64) (map[string][]oas.AiUuid, error) {
	rows, err := q.QueryContext(ctx, `SELECT evaluation_id, application_id FROM ai_custom_evaluation_links WHERE team_id = $1 ORDER BY evaluation_id, application_id`, teamID)
	if err != nil {
		return nil, fmt.Errorf("read AI custom evaluation links: %w", err)
	}
	defer rows.Close()
	out := map[string][]oas.AiUuid{}
	for rows.Next() {
		var e, a string
		if err := rows.Scan(&e, &a); err != nil {
			return nil, err
		}
		out[e] = append(out[e], oas.AiUuid(a))
	}
	return out, rows.Err()
}

// putCustom stores c without its links (new when exists is false), updated now.
func putCustom(ctx context.Context, tx *db.Tx, teamID int64, c oas.AiCustomEvaluation, exists bool) error {
	c.ApplicationIds = nil
	doc, err := c.MarshalJSON()
	if err != nil {
		return err
	}
	id := string(c.ID.Value)
	if exists {
		res, err := tx.ExecContext(ctx, `UPDATE ai_custom_evaluations SET name = $3, document = $4, updated_at = $5 WHERE team_id = $1 AND id = $2`,
			teamID, id, c.Name.Or(""), string(doc), tx.Now.UnixMicro())
		return db.OneRow(res, err, "update AI custom evaluation")
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO ai_custom_evaluations (team_id, id, name, document, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
		teamID, id, c.Name.Or(""), string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert AI custom evaluation: %w", db.Translate(err))
	}
	return nil
}

// deleteCustom removes the team's custom evaluation id and its links; db.ErrNotFound when there
// is none.
func deleteCustom(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM ai_custom_evaluation_links WHERE team_id = $1 AND evaluation_id = $2`, teamID, id); err != nil {
		return fmt.Errorf("delete AI custom evaluation links: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM ai_custom_evaluations WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete AI custom evaluation")
}

// link links the custom evaluation to the application; linking twice changes nothing.
func link(ctx context.Context, tx *db.Tx, teamID int64, evaluationID, applicationID string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO ai_custom_evaluation_links (team_id, evaluation_id, application_id) VALUES ($1, $2, $3)
		ON CONFLICT (team_id, evaluation_id, application_id) DO NOTHING`, teamID, evaluationID, applicationID)
	if err != nil {
		return fmt.Errorf("link AI custom evaluation: %w", err)
	}
	return nil
}

// unlink removes the link; db.ErrNotFound when there is none.
func unlink(ctx context.Context, tx *db.Tx, teamID int64, evaluationID, applicationID string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM ai_custom_evaluation_links WHERE team_id = $1 AND evaluation_id = $2 AND application_id = $3`,
		teamID, evaluationID, applicationID)
	return db.OneRow(res, err, "unlink AI custom evaluation")
}

// setLinks makes the custom evaluation's links exactly ids.
func setLinks(ctx context.Context, tx *db.Tx, teamID int64, evaluationID string, ids []oas.AiUuid) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM ai_custom_evaluation_links WHERE team_id = $1 AND evaluation_id = $2`, teamID, evaluationID); err != nil {
		return fmt.Errorf("replace AI custom evaluation links: %w", err)
	}
	for _, a := range ids {
		if err := link(ctx, tx, teamID, evaluationID, string(a)); err != nil {
			return err
		}
	}
	return nil
}

// isNotFound reports whether err says the row does not exist.
func isNotFound(err error) bool { return errors.Is(err, db.ErrNotFound) }
