package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"ctrljudge/judge/verdict"
)

// CSVCell makes a cell safe to open in a spreadsheet: a leading = + - @
// (or tab, carriage return) would start a formula, so it gets a quote.
func CSVCell(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r') {
		return "'" + s
	}
	return s
}

// WriteCSV writes the matrix with one row per learner, as gradebooks
// import it: per exercise the status, best score (percent of tests
// passed), best and latest outcome, attempts, first solved time and late flag.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"learner", "learner_id", "solved", "attempts"}
	for _, e := range r.Exercises {
		for _, f := range []string{"status", "best_score", "best_outcome", "latest_outcome", "attempts", "first_solved", "late"} {
			head = append(head, e.Slug+"_"+f)
		}
	}
	rows := [][]string{head}
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, l := range r.Learners {
		row := []string{l.Name, strconv.FormatInt(l.ID, 10), strconv.Itoa(l.Solved), strconv.Itoa(l.Attempts)}
		for _, c := range l.Cells {
			score, best, latest := "", "", ""
			if c.Best != nil {
				score = Percent(c.Best.Score())
				best = string(c.Best.Outcome)
			}
			if c.Latest != nil {
				latest = string(c.Latest.Outcome)
			}
			late := "no"
			if c.Late {
				late = "yes"
			}
			row = append(row, c.Status, score, best, latest, strconv.Itoa(c.Attempts), ts(c.FirstSolved), late)
		}
		rows = append(rows, row)
	}
	for _, row := range rows {
		for i := range row {
			// Learners choose their names, and a CSV file is read in
			// terminals as well as spreadsheets.
			row[i] = CSVCell(verdict.Inert(row[i]))
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// Percent writes a share as a percentage with at most one decimal: 0.118
// is "11.8", never 11.799999999999999.
func Percent(share float64) string {
	return strconv.FormatFloat(math.Round(share*1000)/10, 'f', -1, 64)
}

// WriteJSON writes the whole report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}
