// Package conformance checks mgmtapi's answers against the public OpenAPI documents of the real
// service (one per service), read at test time from a directory outside the repository. The
// documents are loaded with kin-openapi after their brand names are renamed the way mgmtapi
// renames them (cxManaged → platformManaged, CX_CUSTOM_DASHBOARD → PLATFORM_CUSTOM_DASHBOARD), and
// each answer is validated by kin-openapi's openapi3filter against the public operation that our
// operation implements. It is test support: nothing of the documents is ever committed.
package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// DirVariable names the environment variable that gives the directory of the public documents.
// When it is set, the documents must load (a test that uses them fails otherwise); when it is
// not, the directory `../shared/reference/public-spec` beside the module root is used if it
// exists, and no check is made if it does not.
const DirVariable = "MGMTAPI_PUBLIC_SPEC_DIR"

// Documents are the public documents of one directory, renamed and indexed by operation.
type Documents struct {
	// Dir is the directory they were read from.
	Dir string
	// Files are the document file names, sorted.
	Files      []string
	documents  map[string]*openapi3.T      // by file name
	operations map[string]*PublicOperation // by method + " " + normalised path
	byID       map[string]*PublicOperation
	// errorSchema is the shared Error schema: {code 100–599, message ≤ 4096 characters}.
	errorSchema *openapi3.SchemaRef
}

// PublicOperation is one operation of a public document.
type PublicOperation struct {
	// ID is the public operationId, e.g. IncidentsService_GetIncident.
	ID string
	// Method and Path are as the public document writes them (GET, /incidents/incidents/v1/{id}).
	Method, Path string
	// File is the document that declares it.
	File string
	// folder is the name of the directory of File (public-spec, public-spec-latest).
	folder string

	route       *routers.Route
	errorSchema *openapi3.SchemaRef
}

// Load reads every *.json document of dir, renames brand names in its schemas, and indexes its
// operations. It fails when the directory has no document, a document does not parse or resolve,
// two documents declare the same method and path, or no document has the shared Error schema.
func Load(dir string) (*Documents, error) {
	return LoadOnly(dir, func(string) bool { return true })
}

// LoadOnly is Load of the documents of dir whose file name keep accepts.
func LoadOnly(dir string, keep func(name string) bool) (*Documents, error) {
	all, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range all {
		if keep(filepath.Base(f)) {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *.json public documents", dir)
	}
	files = append(files, latestOnlyFiles(dir, files)...)
	sort.Slice(files, func(i, j int) bool { return filepath.Base(files[i]) < filepath.Base(files[j]) })
	roots := make(map[string]map[string]any, len(files))
	for _, file := range files {
		root, err := readDocument(file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		roots[file] = root
	}
	uniteSharedEnums(roots)
	docs := &Documents{Dir: dir, documents: map[string]*openapi3.T{}, operations: map[string]*PublicOperation{}, byID: map[string]*PublicOperation{}}
	for _, file := range files {
		name := filepath.Base(file)
		docs.Files = append(docs.Files, name)
		doc, err := loadDocument(roots[file])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		docs.documents[name] = doc
		var fileErrorSchema *openapi3.SchemaRef
		if doc.Components != nil {
			fileErrorSchema = doc.Components.Schemas["Error"]
		}
		if docs.errorSchema == nil && fileErrorSchema != nil {
			docs.errorSchema = fileErrorSchema
		}
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				p := &PublicOperation{ID: op.OperationID, Method: method, Path: path, File: name, folder: filepath.Base(filepath.Dir(file)),
					route:       &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: op},
					errorSchema: fileErrorSchema}
				key := operationKey(method, path)
				if prev := docs.operations[key]; prev != nil {
					if prev.ID == p.ID {
						// Two documents declare one public operation (the key administration
						// service repeats the key service's list and create): the first stands.
						continue
					}
					return nil, fmt.Errorf("%s %s is declared by %s and %s", method, path, prev.File, name)
				}
				docs.operations[key] = p
				docs.byID[p.ID] = p
			}
		}
	}
	if docs.errorSchema == nil {
		return nil, errors.New(dir + ": no document has the shared Error schema (components.schemas.Error)")
	}
	for _, p := range docs.operations {
		if p.errorSchema == nil {
			p.errorSchema = docs.errorSchema
		}
	}
	return docs, nil
}

// Operation returns the public operation at method and path template (parameter names do not
// matter: /x/{id} finds /x/{case_id}), or nil.
func (d *Documents) Operation(method, path string) *PublicOperation {
	return d.operations[operationKey(method, path)]
}

// OperationByID returns the public operation with that operationId, or nil.
func (d *Documents) OperationByID(id string) *PublicOperation {
	return d.byID[id]
}

// Operations returns the operations of one document, sorted by path and method.
func (d *Documents) Operations(file string) []*PublicOperation {
	var out []*PublicOperation
	for _, p := range d.operations {
		if p.File == file {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Path+" "+out[i].Method < out[j].Path+" "+out[j].Method
	})
	return out
}

// HasEnumValue reports whether a schema of the document (after renaming) allows value as an
// enum value.
func (d *Documents) HasEnumValue(file, value string) bool {
	doc := d.documents[file]
	if doc == nil || doc.Components == nil {
		return false
	}
	seen := map[*openapi3.Schema]bool{}
	var has func(ref *openapi3.SchemaRef) bool
	has = func(ref *openapi3.SchemaRef) bool {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return false
		}
		s := ref.Value
		seen[s] = true
		if slices.Contains(s.Enum, any(value)) {
			return true
		}
		for _, sub := range s.Properties {
			if has(sub) {
				return true
			}
		}
		for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
			if slices.ContainsFunc(list, has) {
				return true
			}
		}
		return has(s.Items) || has(s.AdditionalProperties.Schema) || has(s.Not)
	}
	for _, ref := range doc.Components.Schemas {
		if has(ref) {
			return true
		}
	}
	return false
}

// Len is the number of public operations.
func (d *Documents) Len() int { return len(d.operations) }

var pathParameter = regexp.MustCompile(`\{[^}]*\}`)

func operationKey(method, path string) string {
	return strings.ToUpper(method) + " " + pathParameter.ReplaceAllString(path, "{}")
}

// readDocument decodes one public document and renames its brand words.
func readDocument(file string) (map[string]any, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, err
	}
	renameBrandsInDocument(root)
	return root, nil
}

// uniteSharedEnums gives an enum component that several documents declare under one name the
// union of their values. The documents are snapshots of different dates (INDEX.md): the presets
// document predates the entities document, whose notification_center.EntityType has gained
// OLLY_SCHEDULED_TASKS; the service answers the newer value through both.
func uniteSharedEnums(roots map[string]map[string]any) {
	values := map[string][]any{}
	for _, root := range roots {
		for name, schema := range componentSchemas(root) {
			for _, v := range schema["enum"].([]any) {
				if !slices.Contains(values[name], v) {
					values[name] = append(values[name], v)
				}
			}
		}
	}
	for _, root := range roots {
		for name, schema := range componentSchemas(root) {
			schema["enum"] = slices.Clone(values[name])
		}
	}
}

// componentSchemas returns the component schemas of root that are enums.
func componentSchemas(root map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	components, _ := root["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	for name, s := range schemas {
		if schema, ok := s.(map[string]any); ok {
			if _, ok := schema["enum"].([]any); ok {
				out[name] = schema
			}
		}
	}
	return out
}

func loadDocument(root map[string]any) (*openapi3.T, error) {
	renamed, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(renamed)
	if err != nil {
		return nil, err
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, errors.New("no paths")
	}
	return doc, nil
}
