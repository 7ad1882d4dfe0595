package api

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Integer path parameters (a view's id, a team's id, …) are refused unless written the one
// way a number is written: the generated decoder reads them with strconv, which takes "+1" and
// "01" as 1, so /views/+1 and /views/01 would both name view 1 — two spellings of one resource,
// which a cache, an access log or an audit record would count as two. A plus sign, a leading
// zero or a space gets 400 naming the parameter; a minus sign is left to the parameter's
// minimum, which words it.

// integerPathArgs reads, from the OpenAPI document, the integer path parameters of each
// operation, keyed by operationId: the name of each of the operation's path parameters, in the
// order the router gives their values (Route.Args), "" for those that are not integers.
func integerPathArgs(doc *openapiDocument) (map[string][]string, error) {
	type parameter struct {
		Ref    string `yaml:"$ref"`
		Name   string `yaml:"name"`
		In     string `yaml:"in"`
		Schema struct {
			Type string `yaml:"type"`
		} `yaml:"schema"`
	}
	resolve := func(p parameter) (parameter, error) {
		ref, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
		if !ok {
			return p, nil
		}
		node, ok := doc.parameterNodes[ref]
		if !ok {
			return p, fmt.Errorf("openapi document: no parameter %s", p.Ref)
		}
		var out parameter
		if err := node.Decode(&out); err != nil {
			return p, fmt.Errorf("openapi document: %s: %w", p.Ref, err)
		}
		return out, nil
	}
	placeholder := regexp.MustCompile(`\{([^}]+)\}`)
	out := map[string][]string{}
	for _, o := range doc.operations {
		var op struct {
			OperationID string      `yaml:"operationId"`
			Parameters  []parameter `yaml:"parameters"`
		}
		if err := o.decode(&op); err != nil {
			return nil, err
		}
		var shared []parameter
		if node, ok := doc.pathParameters[o.path]; ok {
			if err := node.Decode(&shared); err != nil {
				return nil, fmt.Errorf("openapi document: %s parameters: %w", o.path, err)
			}
		}
		integers := map[string]bool{}
		// The path item's parameters first: the operation's own override them.
		for _, p := range append(shared, op.Parameters...) {
			p, err := resolve(p)
			if err != nil {
				return nil, err
			}
			if p.In == "path" {
				integers[p.Name] = p.Schema.Type == "integer"
			}
		}
		var names []string
		for _, m := range placeholder.FindAllStringSubmatch(o.path, -1) {
			name := ""
			if integers[m[1]] {
				name = m[1]
			}
			names = append(names, name)
		}
		if strings.Join(names, "") != "" {
			out[op.OperationID] = names
		}
	}
	return out, nil
}

// checkIntegerPathIDs returns the refusal of a request whose path writes an integer path
// parameter with a plus sign, a leading zero or a space, or "". The route is looked up only when
// some segment of the path looks like such a number.
func (a *API) checkIntegerPathIDs(r *http.Request) string {
	if !mayHoldPaddedNumber(r.URL.Path) {
		return ""
	}
	route, ok := a.router.FindPath(r.Method, r.URL)
	if !ok {
		return ""
	}
	names := a.integerPathArgs[route.OperationID()]
	for i, value := range route.Args() {
		if i < len(names) && names[i] != "" && !plainInteger(value) {
			return fmt.Sprintf("%s: must be written as a plain decimal integer, without a plus sign, leading zeros or spaces (got %q)",
				names[i], value)
		}
	}
	return ""
}

// mayHoldPaddedNumber reports whether some segment of path is a decimal number written with a
// sign, a leading zero or surrounding spaces.
func mayHoldPaddedNumber(path string) bool {
	for segment := range strings.SplitSeq(path, "/") {
		if segment == "" || plainInteger(segment) {
			continue
		}
		digits := strings.TrimLeft(strings.TrimSpace(segment), "+-")
		if digits == "" {
			continue
		}
		number := true
		for i := 0; i < len(digits) && number; i++ {
			number = digits[i] >= '0' && digits[i] <= '9'
		}
		if number {
			return true
		}
	}
	return false
}

// plainInteger reports whether s is an integer written the one plain way: an optional minus,
// then 0 or digits not starting with 0.
func plainInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
