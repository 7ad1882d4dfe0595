// Package promrules turns a team's stored configuration into Prometheus rule files: the
// recording-rule sets as they are, and for each SLO whose indicator is PromQL the multi-window,
// multi-burn-rate recording and alerting rules.
package promrules

// File is a Prometheus rule file: the document `promtool check rules` reads. LeftOut is not part
// of the document Prometheus reads: YAML writes it as comments before the groups.
type File struct {
	Groups  []Group   `yaml:"groups" json:"groups"`
	LeftOut []LeftOut `yaml:"-" json:"-"`
}

// LeftOut is an SLO or an enabled alert definition that has no rules in the team's file, and why:
// Kind is "SLO" or "alert definition", Reason the error its rules were refused with.
type LeftOut struct {
	Kind, ID, Name, Reason string
}

// Group is one rule group of a rule file. Interval is a Prometheus duration ("1m"), empty for
// the server's global evaluation interval; Limit 0 means no limit.
type Group struct {
	Name     string `yaml:"name" json:"name"`
	Interval string `yaml:"interval,omitempty" json:"interval,omitempty"`
	Limit    int    `yaml:"limit,omitempty" json:"limit,omitempty"`
	Rules    []Rule `yaml:"rules" json:"rules"`
}

// Rule is a recording rule (Record set) or an alerting rule (Alert set), never both.
type Rule struct {
	Record      string            `yaml:"record,omitempty" json:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty" json:"alert,omitempty"`
	Expr        string            `yaml:"expr" json:"expr"`
	For         string            `yaml:"for,omitempty" json:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
}
