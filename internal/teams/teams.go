// Package teams owns the teams of a deployment: the first-start bootstrap, the operator API that
// creates and lists teams, and the public teams operations (public.go), which the operator key
// and team keys both reach.
package teams

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/apikeys"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// DefaultTeamName is the name of the team that the bootstrap creates.
const DefaultTeamName = "default"

// Bootstrapped reports what Bootstrap did.
type Bootstrapped struct {
	// Created is true when this call created the default team and its key.
	Created bool
	// KeyValue is the key's secret; set only when Created and it was generated here.
	KeyValue  string
	Generated bool
}

// Bootstrap creates the default team and a key holding every permission when the database has
// no team at all. The key's value is keyValue when it is not empty, otherwise a random one. On
// a database that already has teams it does nothing, whatever keyValue is. Replicas that start
// together create the team once.
func Bootstrap(ctx context.Context, database *db.DB, keyValue string) (Bootstrapped, error) {
	var out Bootstrapped
	err := database.InTx(ctx, func(tx *db.Tx) error {
		var teams int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM teams`).Scan(&teams); err != nil {
			return err
		}
		if teams > 0 {
			return nil
		}
		var teamID int64
		err := tx.QueryRowContext(ctx,
			`INSERT INTO teams (name, created_at) VALUES ($1, $2)
			 ON CONFLICT (name) DO NOTHING RETURNING id`,
			DefaultTeamName, tx.Now.UnixMicro()).Scan(&teamID)
		if db.IsNotFound(err) {
			return nil // another replica won the race
		}
		if err != nil {
			return fmt.Errorf("create default team: %w", err)
		}
		_, value, err := apikeys.Insert(ctx, tx, apikeys.NewKey{
			TeamID: teamID, Name: "bootstrap", Hashed: true, Presets: []string{auth.FullAccess},
			Value: keyValue,
		})
		if err != nil {
			return err
		}
		out = Bootstrapped{Created: true, KeyValue: value, Generated: keyValue == ""}
		return nil
	})
	return out, err
}

// OperatorHandler implements the operator operations of oas.Handler.
type OperatorHandler struct {
	db    *db.DB
	authn *auth.Authenticator
}

// NewHandler returns the operator operations and the public teams operations. authn forgets a
// deleted team's keys at once.
func NewHandler(database *db.DB, authn *auth.Authenticator) *OperatorHandler {
	return &OperatorHandler{db: database, authn: authn}
}

// AdminCreateTeam creates a team and its first key, which holds every permission.
//
// Errors: Conflict when a team of that name exists.
func (h *OperatorHandler) AdminCreateTeam(ctx context.Context, req *oas.AdminTeamInput) (*oas.AdminTeamCreated, error) {
	var out oas.AdminTeamCreated
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		var teamID int64
		err := tx.QueryRowContext(ctx,
			`INSERT INTO teams (name, created_at) VALUES ($1, $2) RETURNING id`,
			req.Name, tx.Now.UnixMicro()).Scan(&teamID)
		if err != nil {
			return db.Translate(err)
		}
		tx.AuditTeam(teamID)
		tx.AuditResource(strconv.FormatInt(teamID, 10))
		keyID, value, err := apikeys.Insert(ctx, tx, apikeys.NewKey{
			TeamID: teamID, Name: "first key", Hashed: true, Presets: []string{auth.FullAccess},
		})
		if err != nil {
			return err
		}
		out = oas.AdminTeamCreated{
			Team:   oas.AdminTeam{ID: teamID, Name: req.Name},
			ApiKey: oas.AdminTeamKey{KeyId: keyID, Value: value},
		}
		return nil
	})
	if errors.Is(err, db.ErrConflict) {
		return nil, apierror.Conflictf("name: a team named %q already exists", req.Name)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// AdminListTeams lists every team by id.
func (h *OperatorHandler) AdminListTeams(ctx context.Context) (*oas.AdminTeamList, error) {
	rows, err := h.db.Read().QueryContext(ctx, `SELECT id, name FROM teams ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list teams: %w", err)
	}
	defer rows.Close()
	out := &oas.AdminTeamList{Teams: []oas.AdminTeam{}}
	for rows.Next() {
		var t oas.AdminTeam
		if err := rows.Scan(&t.ID, &t.Name); err != nil {
			return nil, err
		}
		out.Teams = append(out.Teams, t)
	}
	return out, rows.Err()
}
