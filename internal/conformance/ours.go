package conformance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/go-faster/yaml"

	spec "github.com/mgmtapi/mgmtapi/api"
)

// NotPublic lists, with the reason, every operation of api/openapi.yaml that no public document
// declares: their answers are not checked. An operation that matches no public operation and is
// not listed here fails TestEveryOperationIsMatchedOrListed, so a new route is noticed.
var NotPublic = map[string]string{
	"AdminCreateTeam":                  "operator API (mgmtapi's own)",
	"AdminListTeams":                   "operator API (mgmtapi's own)",
	"AdminGetCaseKPIs":                 "operator API (mgmtapi's own)",
	"AdminSetCaseKPIs":                 "operator API (mgmtapi's own)",
	"AdminImportUsage":                 "operator API (mgmtapi's own)",
	"IngestAlertmanager":               "alert ingestion, beyond the specification",
	"DeleteRecordingRuleSetByQuery":    "contract §6: DELETE on the recording-rule collection with the id as a query parameter",
	"GetDeployedExtension":             "mgmtapi's own read of one extension deployment",
	"AdminListAuditRecords":            "operator API (mgmtapi's own): the audit log",
	"GetPrometheusRules":               "issue 14: the team's rules as a Prometheus rule file, mgmtapi's own",
	"ExportTeamConfiguration":          "issue 14: a team's configuration as one document, mgmtapi's own",
	"ApplyTeamConfiguration":           "issue 14: make a team's configuration equal to a document, mgmtapi's own",
	"GetSchedulerRulesForAlertmanager": "issue 26: the scheduler rules as Alertmanager silences and time intervals, mgmtapi's own",
	"AdminRegisterAiApplication":       "operator API (mgmtapi's own): registers a team's AI application (issue 36)",
}

// publicPathRenamed maps our operations whose path is not their public path without the
// `/mgmt/openapi/<n>` prefix to the public operationId they implement: E15's seed path
// `GET /v1/slo/slos:batchGet` is `GET /slo/slos/v1/all/list` in the chosen document.
var publicPathRenamed = map[string]string{
	"BatchGetSlos": "SlosService_BatchGetSlos",
}

// segmentShapes maps an operation of ours that answers another segment's shape of the same
// public operation to the operation it shares that public operation with: E25 answers the
// version 4 shape under segment 4 and the newest one under every other segment.
var segmentShapes = map[string]string{
	"CreateQuotaRuleSetV5": "CreateQuotaRuleSet",
}

// SameOperation reports whether our operations a and b implement one public operation on
// purpose: one at the specification's path and one at the public path, or the shapes of two
// segments.
func SameOperation(a, b string) bool {
	_, aRenamed := publicPathRenamed[a]
	_, bRenamed := publicPathRenamed[b]
	return aRenamed || bRenamed || segmentShapes[a] == b || segmentShapes[b] == a
}

// OurOperation is one operation of api/openapi.yaml and the public operation it implements (nil
// for the operations of NotPublic), in the older documents and in the newest ones.
type OurOperation struct {
	ID, Method, Path string
	Public           *PublicOperation
	// Latest is the same public operation in the newest documents, found by its operationId; nil
	// when they are not loaded or do not have it.
	Latest *PublicOperation
}

// Checker knows, for each of our operations, the public operation to check its answers against.
type Checker struct {
	Docs *Documents
	// Latest are the newest documents of the served services; nil when they are not found.
	Latest *Documents
	ours   map[string]*OurOperation
	// Unmatched are our operationIds that match no public operation, sorted.
	Unmatched []string
}

var versionPrefix = regexp.MustCompile(`^/mgmt/openapi/[0-9]+(/.*)$`)

// NewChecker matches every operation of api/openapi.yaml with a public operation: by method and
// path without the `/mgmt/openapi/<n>` prefix (path parameter names do not matter), or through
// publicPathRenamed. It fails when our document does not parse or a renamed operation names a
// public operation that does not exist.
func NewChecker(docs *Documents) (*Checker, error) { return NewCheckerWithLatest(docs, nil) }

// NewCheckerWithLatest is NewChecker that also matches every operation with the newest documents
// (latest may be nil), by the public operationId it implements in docs. Answers are then checked against both; where the two disagree, the newest wins.
func NewCheckerWithLatest(docs, latest *Documents) (*Checker, error) {
	var root struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &root); err != nil {
		return nil, fmt.Errorf("api/openapi.yaml: %w", err)
	}
	c := &Checker{Docs: docs, Latest: latest, ours: map[string]*OurOperation{}}
	for path, item := range root.Paths {
		for method, raw := range item {
			op, ok := raw.(map[string]any)
			if !ok || !slices.Contains([]string{"get", "put", "post", "delete", "patch"}, method) {
				continue
			}
			id, _ := op["operationId"].(string)
			ours := &OurOperation{ID: id, Method: strings.ToUpper(method), Path: path}
			if publicID, ok := publicPathRenamed[id]; ok {
				if ours.Public = docs.OperationByID(publicID); ours.Public == nil {
					return nil, fmt.Errorf("%s: the public operation %s is in no document", id, publicID)
				}
			} else if m := versionPrefix.FindStringSubmatch(path); m != nil {
				ours.Public = docs.Operation(method, m[1])
			}
			if latest != nil && ours.Public != nil {
				ours.Latest = latest.OperationByID(ours.Public.ID)
			}
			if ours.Public == nil && ours.Latest == nil {
				c.Unmatched = append(c.Unmatched, id)
			}
			c.ours[id] = ours
		}
	}
	sort.Strings(c.Unmatched)
	return c, nil
}

// Operation returns our operation with that operationId, or nil.
func (c *Checker) Operation(id string) *OurOperation { return c.ours[id] }

// Operations returns all our operations, sorted by operationId.
func (c *Checker) Operations() []*OurOperation {
	out := make([]*OurOperation, 0, len(c.ours))
	for _, o := range c.ours {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Location says where the public documents are looked for.
type Location struct {
	// Dir is the directory; "" when none is configured and the default one does not exist.
	Dir string
	// FromVariable is true when Dir comes from MGMTAPI_PUBLIC_SPEC_DIR.
	FromVariable bool
}

// Locate returns the directory named by MGMTAPI_PUBLIC_SPEC_DIR, else
// `../shared/reference/public-spec` beside the module root when it is a directory, else none.
func Locate() Location {
	if dir := os.Getenv(DirVariable); dir != "" {
		return Location{Dir: dir, FromVariable: true}
	}
	root, err := moduleRoot()
	if err != nil {
		return Location{}
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "reference", "public-spec")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return Location{Dir: dir}
	}
	return Location{}
}

// moduleRoot is the nearest directory above the working directory (a test's package
// directory) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

var shared struct {
	once     sync.Once
	location Location
	checker  *Checker
	err      error
}

// Shared returns the checker of this process, loaded once from Locate's directory: nil and no
// error when no directory is configured or found (then nothing is checked), an error when the
// directory cannot be loaded.
func Shared() (*Checker, Location, error) {
	shared.once.Do(func() {
		shared.location = Locate()
		if shared.location.Dir == "" {
			return
		}
		docs, err := Load(shared.location.Dir)
		if err != nil {
			shared.err = fmt.Errorf("public documents (%s=%q): %w", DirVariable, shared.location.Dir, err)
			return
		}
		var latest *Documents
		if dir := LocateLatest().Dir; dir != "" {
			// Only the served services: the newest set has services whose paths overlap ours.
			latest, err = LoadOnly(dir, func(name string) bool {
				return slices.Contains(docs.Files, name) || slices.Contains(LatestOnly, name)
			})
			if err != nil {
				shared.err = fmt.Errorf("newest public documents (%s=%q): %w", LatestDirVariable, dir, err)
				return
			}
		}
		shared.checker, shared.err = NewCheckerWithLatest(docs, latest)
	})
	return shared.checker, shared.location, shared.err
}

// LatestDirVariable names the environment variable that gives the directory of the newest public
// documents, those that clients in the field are generated from. When it is not set, the
// directory `public-spec-latest` beside Locate's directory is used if it exists.
const LatestDirVariable = "MGMTAPI_PUBLIC_SPEC_LATEST_DIR"

// LocateLatest returns the directory of the newest public documents, as LatestDirVariable says.
func LocateLatest() Location {
	if dir := os.Getenv(LatestDirVariable); dir != "" {
		return Location{Dir: dir, FromVariable: true}
	}
	older := Locate()
	if older.Dir == "" {
		return Location{}
	}
	dir := filepath.Join(filepath.Dir(older.Dir), "public-spec-latest")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return Location{Dir: dir, FromVariable: older.FromVariable}
	}
	return Location{}
}
