package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// printTable writes one row per scenario: the name aligned left, the figures aligned right.
func printTable(w io.Writer, measured []measurement) {
	rows := [][]string{{"scenario", "conns", "mgmtapi req/s", "p50", "p99", "bare req/s", "p50", "p99", "ratio", "peak RSS", "non-2xx"}}
	for _, m := range measured {
		ratio := "–"
		if m.bare.requests > 0 && m.mgmtapi.requests > 0 {
			ratio = fmt.Sprintf("%.2f×", m.mgmtapi.rate()/m.bare.rate())
		}
		rows = append(rows, []string{
			m.scenario.name, fmt.Sprint(m.connections),
			fmt.Sprintf("%.0f", m.mgmtapi.rate()), latency(&m.mgmtapi, 0.50), latency(&m.mgmtapi, 0.99),
			fmt.Sprintf("%.0f", m.bare.rate()), latency(&m.bare, 0.50), latency(&m.bare, 0.99),
			ratio, rss(m.peakRSS, m.peakOverLife),
			fmt.Sprint(m.mgmtapi.unsuccessful() + m.bare.unsuccessful()),
		})
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i == 0 {
				line.WriteString(cell + pad)
			} else {
				line.WriteString("  " + pad + cell)
			}
		}
		fmt.Fprintln(w, line.String())
	}
	fmt.Fprintln(w)
	for _, m := range measured {
		fmt.Fprintf(w, "  %-*s  %s\n", widths[0], m.scenario.name, m.scenario.title)
	}
	fmt.Fprintln(w, "  ratio = mgmtapi req/s ÷ bare req/s; peak RSS = VmHWM of the mgmtapi process during the scenario,")
	fmt.Fprintln(w, "  which includes what it held when the scenario began; – = no request finished within a round")
	fmt.Fprintln(w, normalLoadRSS(measured))
}

// normalLoadRSSTarget is issue 15's bound on the server's resident memory under normal load.
const normalLoadRSSTarget = 100 << 20

// normalLoadRSS says the highest peak RSS of the scenarios measured, against normalLoadRSSTarget.
func normalLoadRSS(measured []measurement) string {
	var peak int64 = -1
	var at string
	overLife := false
	for _, m := range measured {
		if m.peakRSS > peak {
			peak, at, overLife = m.peakRSS, m.scenario.name, m.peakOverLife
		}
	}
	if peak < 0 {
		return "peak RSS under normal load: unknown (target ≤ 100 MiB)"
	}
	verdict := "met"
	if peak > normalLoadRSSTarget {
		verdict = "MISSED"
	}
	return fmt.Sprintf("peak RSS under normal load: %s (%s), target ≤ 100 MiB: %s", rss(peak, overLife), at, verdict)
}

// printFailures lists what a server answered other than 2xx and returns how many requests that was.
func printFailures(w io.Writer, scenario, server string, r result) int {
	n := r.unsuccessful()
	if n == 0 {
		return 0
	}
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(r.statuses)) {
		parts = append(parts, fmt.Sprintf("%d × %d", r.statuses[code], code))
	}
	if r.failures > 0 {
		parts = append(parts, fmt.Sprintf("%d without an answer (last: %s)", r.failures, r.lastError))
	}
	fmt.Fprintf(w, "%s on %s: %s\n", scenario, server, strings.Join(parts, ", "))
	return n
}

// latency formats one percentile of r.
func latency(r *result, q float64) string {
	if len(r.latencies) == 0 {
		return "–"
	}
	d := r.percentile(q)
	switch {
	case d >= 100*time.Millisecond:
		return fmt.Sprintf("%.0fms", d.Seconds()*1000)
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", d.Seconds()*1000)
	default:
		return fmt.Sprintf("%.0fµs", d.Seconds()*1e6)
	}
}

func rss(bytes int64, overLife bool) string {
	if bytes < 0 {
		return "unknown"
	}
	s := fmt.Sprintf("%.0f MiB", float64(bytes)/(1<<20))
	if overLife {
		s += " (since start)"
	}
	return s
}
