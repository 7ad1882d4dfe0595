package enrichments

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
)

// The bounds of one data set's file. The size and row bounds are the public settings'
// (GetCompanyEnrichmentSettings answers them); the column bounds are ours: an enrichment selects
// at most 100 columns of 1–1024 characters, so a table has no use for more.
const (
	MaxFileBytes     = 20971520
	MaxRows          = 150000
	MaxColumns       = 100
	MaxColumnNameLen = 1024
	// QueryOnlyMaxRows and QueryOnlyMaxBytes are the public bounds of query-only data sets,
	// answered by the settings; no operation makes one, so none is ever stored.
	QueryOnlyMaxRows  = 10000
	QueryOnlyMaxBytes = 524288
)

// table is a parsed CSV file: its header row and its records, every one as wide as the header.
type table struct {
	header []string
	rows   [][]string
}

// parseCSV reads data as one RFC 4180 table (encoding/csv, strict quotes): a header row of 1 to
// MaxColumns distinct, non-empty names of at most MaxColumnNameLen characters, then 0 to MaxRows
// records of the header's width. A leading UTF-8 byte order mark is skipped; empty lines are
// skipped, as encoding/csv does.
//
// Errors: Invalid naming field (e.g. "file.textual") and, for a fault inside the file, its line
// (1-based): more than MaxFileBytes bytes, not UTF-8, a malformed quote, a record of another
// width, a bad header, too many rows or columns.
func parseCSV(field string, data []byte) (table, error) {
	if len(data) > MaxFileBytes {
		return table{}, apierror.Invalidf("%s: the file has %d bytes, more than the %d a data set may have", field, len(data), MaxFileBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return table{}, apierror.Invalidf("%s: line %d: the file is not UTF-8 text", field, invalidUTF8Line(data))
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = 0 // the header's width, for every record
	var t table
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return table{}, csvError(field, err, len(t.header))
		}
		if t.header == nil {
			if err := checkHeader(field, rec); err != nil {
				return table{}, err
			}
			t.header = rec
			continue
		}
		if len(t.rows) == MaxRows {
			line, _ := r.FieldPos(0)
			return table{}, apierror.Invalidf("%s: line %d: the file has more than %d rows after the header, the most a data set may have", field, line, MaxRows)
		}
		t.rows = append(t.rows, rec)
	}
	if t.header == nil {
		return table{}, apierror.Invalidf("%s: the file is empty; it must start with a header row naming the columns", field)
	}
	return t, nil
}

// checkHeader applies the header rules to the first record.
func checkHeader(field string, names []string) error {
	if len(names) > MaxColumns {
		return apierror.Invalidf("%s: line 1: the header has %d columns, more than the %d a data set may have", field, len(names), MaxColumns)
	}
	seen := make(map[string]int, len(names))
	for i, n := range names {
		switch {
		case strings.TrimSpace(n) == "":
			return apierror.Invalidf("%s: line 1: column %d of the header is empty; every column needs a name", field, i+1)
		case utf8.RuneCountInString(n) > MaxColumnNameLen:
			return apierror.Invalidf("%s: line 1: the name of column %d is longer than %d characters", field, i+1, MaxColumnNameLen)
		}
		if j, ok := seen[n]; ok {
			return apierror.Invalidf("%s: line 1: columns %d and %d are both named %q; column names must differ", field, j+1, i+1, n)
		}
		seen[n] = i
	}
	return nil
}

// csvError words an encoding/csv error with its line.
func csvError(field string, err error, width int) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return apierror.Invalidf("%s: %v", field, err)
	}
	switch {
	case errors.Is(pe.Err, csv.ErrFieldCount):
		return apierror.Invalidf("%s: line %d: the record does not have the header's %d fields", field, pe.StartLine, width)
	case errors.Is(pe.Err, csv.ErrQuote):
		return apierror.Invalidf("%s: line %d, column %d: a quote inside a field that is not quoted; quote the field and double the quote", field, pe.Line, pe.Column)
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return apierror.Invalidf("%s: line %d, column %d: a quote inside a quoted field must be doubled (\"\")", field, pe.Line, pe.Column)
	default:
		return apierror.Invalidf("%s: line %d: %v", field, pe.Line, pe.Err)
	}
}

// invalidUTF8Line is the 1-based line of the first byte of data that is not UTF-8.
func invalidUTF8Line(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		i += size
	}
	return line
}

// renderCSV writes header and rows as CSV text, quoting where RFC 4180 needs it, one line per
// record (a line break inside a field stays inside its quotes).
func renderCSV(header []string, rows [][]string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(header) // a strings.Builder does not fail
	_ = w.WriteAll(rows)
	return b.String()
}
