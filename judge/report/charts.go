package report

import (
	"bytes"
	"html/template"
	"strconv"
)

// Bar is one bar of a chart: Value between 0 and 1 sets its length, Text
// is written beside it.
type Bar struct {
	Label string
	Value float64
	Text  string
}

const (
	barHeight  = 22 // px per bar
	labelWidth = 250
	barWidth   = 200
	textWidth  = 90
	histHeight = 120
	histCol    = 44
)

// Charts are drawn by html/template, so labels taken from records are
// escaped like any other text.
var chartTmpl = template.Must(template.New("charts").Parse(`
{{define "hbar"}}<svg class="chart" role="img" aria-label="{{.Title}}" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" xmlns="http://www.w3.org/2000/svg">
<title>{{.Title}}</title>
{{range .Bars}}<g transform="translate(0,{{.Y}})"><title>{{.Full}}: {{.Text}}</title>
<text x="{{$.LabelW}}" dx="-6" y="15" text-anchor="end" class="lbl">{{.Label}}</text>
<rect x="{{$.LabelW}}" y="3" width="{{$.BarW}}" height="16" class="track"/>
<rect x="{{$.LabelW}}" y="3" width="{{.Len}}" height="16" class="bar"/>
<text x="{{$.TextX}}" dx="6" y="15" class="val">{{.Text}}</text>
</g>
{{end}}</svg>{{end}}
{{define "hist"}}<svg class="chart" role="img" aria-label="{{.Title}}" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" xmlns="http://www.w3.org/2000/svg">
<title>{{.Title}}</title>
<line x1="0" y1="{{.Base}}" x2="{{.W}}" y2="{{.Base}}" class="axis"/>
{{range .Cols}}<rect x="{{.X}}" y="{{.Y}}" width="{{.BW}}" height="{{.BH}}" class="bar"/>
<text x="{{.MX}}" y="{{.TY}}" text-anchor="middle" class="val">{{.Text}}</text>
<text x="{{.MX}}" y="{{$.LabelY}}" text-anchor="middle" class="lbl">{{.Label}}</text>
{{end}}</svg>{{end}}`))

type hbarView struct {
	Title              string
	W, H, LabelW, BarW int
	TextX              int
	Bars               []hbarRow
}

type hbarRow struct {
	Y                 int
	Len               int
	Label, Full, Text string
}

// HBarChart draws horizontal bars as inline SVG.
func HBarChart(title string, bars []Bar) template.HTML {
	v := hbarView{Title: title, W: labelWidth + barWidth + textWidth, H: max(len(bars), 1) * barHeight,
		LabelW: labelWidth, BarW: barWidth, TextX: labelWidth + barWidth}
	for i, b := range bars {
		l := b.Label
		if r := []rune(l); len(r) > 36 {
			l = string(r[:35]) + "…"
		}
		v.Bars = append(v.Bars, hbarRow{Y: i * barHeight, Len: int(min(max(b.Value, 0), 1) * barWidth), Label: l, Full: b.Label, Text: b.Text})
	}
	return execChart("hbar", v)
}

type histView struct {
	Title      string
	W, H, Base int
	LabelY     int
	Cols       []histColumn
}

type histColumn struct {
	X, Y, BW, BH, MX, TY int
	Label, Text          string
}

// Histogram draws buckets as vertical bars in inline SVG.
func Histogram(title string, buckets []Bucket) template.HTML {
	top := 0
	for _, b := range buckets {
		top = max(top, b.Count)
	}
	v := histView{Title: title, W: max(len(buckets), 1) * histCol, H: histHeight + 36, Base: histHeight + 16, LabelY: histHeight + 32}
	for i, b := range buckets {
		h := 0
		if top > 0 {
			h = b.Count * histHeight / top
		}
		x := i * histCol
		v.Cols = append(v.Cols, histColumn{X: x + 6, BW: histCol - 12, Y: v.Base - h, BH: h, MX: x + histCol/2, TY: v.Base - h - 4,
			Label: b.Label, Text: strconv.Itoa(b.Count)})
	}
	return execChart("hist", v)
}

func execChart(name string, v any) template.HTML {
	var buf bytes.Buffer
	if err := chartTmpl.ExecuteTemplate(&buf, name, v); err != nil {
		// The templates are fixed and the views plain data: this is a bug.
		panic(err)
	}
	// Safe: produced by html/template, which escaped every value.
	return template.HTML(buf.String())
}
