package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/mgmtapi/mgmtapi/internal/config"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/teams"
)

const keysUsage = `usage: mgmtapi keys create --team NAME|ID [--name KEY-NAME] [--data-dir DIR | --database-url URL]

Issues a new API key holding every permission for a team, straight in the server's database:
for a team whose keys are lost (the key the first start printed was not kept). It works on a
stopped server's data and on a running server's: a server holding its SQLite file alone (the
default) is asked through DIR/mgmtapi.sock, which only the server's user can reach; otherwise
the database is opened beside the server (SQLite in WAL mode, or PostgreSQL). It never creates a
database: a DIR without one is refused (the server logs its absolute data directory at start).
The key's value is printed once on standard output; what was done goes to standard error. The
team's audit log records the key as made by "mgmtapi keys create".

`

// keysCreatePath is the socket request that issues a key in a running server (see
// serveBackupSocket): POST {"team": "...", "name": "..."} → 200 keyCreated, or 400/404/500 with
// {code, message}.
const keysCreatePath = "/v1/keys"

// keysCreateRequest is the body of a keys create request on the socket.
type keysCreateRequest struct {
	Team string `json:"team"`
	Name string `json:"name"`
}

// keyCreated is the socket's answer to a keys create request.
type keyCreated struct {
	TeamID   int64  `json:"teamId"`
	TeamName string `json:"teamName"`
	KeyID    string `json:"keyId"`
	Name     string `json:"name"`
	Value    string `json:"value"`
}

// keysCommand runs `mgmtapi keys SUBCOMMAND`; create is the only one.
func keysCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		fmt.Fprint(stdout, keysUsage)
		if len(args) == 0 {
			return usageError{errors.New("keys: name a subcommand: create")}
		}
		return nil
	}
	if args[0] != "create" {
		return usageError{fmt.Errorf("keys: unknown subcommand %q; the one there is: create", args[0])}
	}
	return helpIsNoError(keysCreate(ctx, args[1:], getenv, stdout, stderr))
}

// keysCreate is `mgmtapi keys create`; see keysUsage.
func keysCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mgmtapi keys create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), keysUsage)
		fs.PrintDefaults()
	}
	dir := getenv("MGMTAPI_DATA_DIR")
	if dir == "" {
		dir = "./data"
	}
	dataDir := fs.String("data-dir", dir, "directory of the SQLite database (MGMTAPI_DATA_DIR)")
	databaseURL := fs.String("database-url", getenv("MGMTAPI_DATABASE_URL"), "PostgreSQL URL, instead of --data-dir (MGMTAPI_DATABASE_URL)")
	team := fs.String("team", "", "the team's name or integer id (required)")
	name := fs.String("name", "recovery key", "the new key's name")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("keys create: unexpected argument %q", fs.Arg(0))}
	case *team == "":
		return usageError{errors.New("keys create: --team: must name the team (its name, or its integer id)")}
	case *name == "":
		return usageError{errors.New("keys create: --name: must not be empty")}
	}

	var key keyCreated
	var where string
	if *databaseURL != "" {
		host := config.DatabaseHost(*databaseURL)
		where = "PostgreSQL database at " + host
		if err := requireMigratedPostgres(ctx, *databaseURL, host); err != nil {
			return fmt.Errorf("keys create: %w", err)
		}
		database, err := db.Open(ctx, db.Options{URL: *databaseURL})
		if err != nil {
			return fmt.Errorf("keys create: database %s: %w", host, err)
		}
		defer database.Close()
		if key, err = issueKey(ctx, database, *team, *name); err != nil {
			return fmt.Errorf("keys create: %w", err)
		}
	} else {
		abs, err := filepath.Abs(*dataDir)
		if err != nil {
			return fmt.Errorf("keys create: --data-dir %s: %w", *dataDir, err)
		}
		file := filepath.Join(abs, sqliteFileName)
		where = "SQLite database " + file
		if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("keys create: no mgmtapi database at %s (is --data-dir right? the server logs its data directory at start)", file)
		} else if err != nil {
			return fmt.Errorf("keys create: %s: %w", file, unwrapPath(err))
		}
		served, err := createKeyThroughServer(ctx, abs, keysCreateRequest{Team: *team, Name: *name}, &key)
		if err != nil {
			return fmt.Errorf("keys create: %w", err)
		}
		if served {
			where += " (through the running server)"
		} else {
			// No server holds the file alone: it is stopped, or shares the file (WAL lets both write).
			database, err := db.Open(ctx, db.Options{DataDir: abs, SharedFile: true})
			if err != nil {
				if heldElsewhere(err) {
					err = fmt.Errorf("%w (a server holds it but does not answer on %s)", err, filepath.Join(abs, backupSocketName))
				}
				return fmt.Errorf("keys create: %s: %w", file, err)
			}
			defer database.Close()
			if key, err = issueKey(ctx, database, *team, *name); err != nil {
				return fmt.Errorf("keys create: %w", err)
			}
		}
	}
	fmt.Fprintf(stderr, "mgmtapi: created key %s %q for team %q (id %d), holding every permission, in the %s.\n"+
		"This is the only time the key is shown; keep it.\n", key.KeyID, key.Name, key.TeamName, key.TeamID, where)
	fmt.Fprintln(stdout, key.Value)
	return nil
}

// issueKey is teams.IssueKey in the socket's answer form.
func issueKey(ctx context.Context, database *db.DB, team, name string) (keyCreated, error) {
	k, err := teams.IssueKey(ctx, database, team, name)
	if err != nil {
		return keyCreated{}, err
	}
	return keyCreated{TeamID: k.TeamID, TeamName: k.TeamName, KeyID: k.KeyID, Name: k.Name, Value: k.Value}, nil
}

// requireMigratedPostgres refuses a PostgreSQL database that no mgmtapi server has set up (its
// schema has no schema_migrations table): keys create never creates a database.
func requireMigratedPostgres(ctx context.Context, rawURL, host string) error {
	isNew, err := postgresIsNew(ctx, rawURL)
	if err != nil {
		return fmt.Errorf("database %s: %w", host, err)
	}
	if isNew {
		return fmt.Errorf("database %s: holds no mgmtapi data (is --database-url right? the server logs its database at start)", host)
	}
	return nil
}

// postgresIsNew reports whether the PostgreSQL database (the schema its search_path names) has
// never been migrated by mgmtapi.
func postgresIsNew(ctx context.Context, rawURL string) (bool, error) {
	pool, err := sql.Open("pgx", rawURL)
	if err != nil {
		return false, err
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(ctx, databaseAttempt)
	defer cancel()
	var exists bool
	err = pool.QueryRowContext(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists)
	return !exists, err
}

// answerKeysCreate runs one keys create request on the server's socket.
func answerKeysCreate(w http.ResponseWriter, r *http.Request, database *db.DB, logger *slog.Logger) {
	answer := func(status int, body any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}
	var req keysCreateRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || req.Team == "" {
		answer(http.StatusBadRequest, map[string]any{"code": 400, "message": `body: must be a JSON object {"team": NAME-OR-ID, "name": KEY-NAME}`})
		return
	}
	key, err := issueKey(r.Context(), database, req.Team, req.Name)
	switch {
	case errors.Is(err, teams.ErrNoTeam):
		answer(http.StatusNotFound, map[string]any{"code": 404, "message": err.Error()})
		return
	case err != nil:
		logger.Warn("keys create through the socket failed", "team", req.Team, "error", err.Error())
		answer(http.StatusInternalServerError, map[string]any{"code": 500, "message": err.Error()})
		return
	}
	// the key's value is never logged
	logger.Info("key created by mgmtapi keys create", "team_id", key.TeamID, "key_id", key.KeyID, "name", key.Name)
	answer(http.StatusOK, key)
}

// createKeyThroughServer asks the server that serves dataDir's socket to issue the key, into out.
// served=false, with no error, when no server answers there: the caller then opens the database
// itself.
func createKeyThroughServer(ctx context.Context, dataDir string, req keysCreateRequest, out *keyCreated) (served bool, err error) {
	served, status, answer, err := askServer(ctx, dataDir, keysCreatePath, req)
	if !served || err != nil {
		return false, err
	}
	path := filepath.Join(dataDir, backupSocketName)
	if status == http.StatusNotFound && !bytes.Contains(answer, []byte(`"code"`)) {
		// a server of an earlier version, whose socket copies only
		return false, fmt.Errorf("the server on %s cannot issue keys (an earlier version); stop it, then run this again", path)
	}
	if status != http.StatusOK {
		return false, errors.New(refusalMessage(answer))
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return false, fmt.Errorf("the server on %s answered no key: %w", path, err)
	}
	return true, nil
}
