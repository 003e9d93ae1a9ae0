package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"strings"
	"time"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"go.abhg.dev/goldmark/frontmatter"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/verdict"
)

//go:embed templates/*.html
var templateFS embed.FS

// Chroma styles for code in statements, one per theme.
const (
	lightCodeStyle = "github"
	darkCodeStyle  = "monokai"
)

// newMarkdown returns the one goldmark instance: GFM, heading IDs, front
// matter, chroma with CSS classes, and raw HTML off (goldmark's default).
func newMarkdown() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(
			extension.GFM,
			&frontmatter.Extender{},
			highlighting.NewHighlighting(highlighting.WithFormatOptions(chromahtml.WithClasses(true))),
		),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	)
}

// docs is every piece of markdown in the catalog, rendered once.
type docs struct {
	chapter     map[string]template.HTML // by chapter slug
	statement   map[string]template.HTML // by exercise slug
	explanation map[string]template.HTML
	solution    map[string]template.HTML // the reference solution, highlighted
}

// renderCatalog renders every chapter, statement, explanation and reference
// solution. The catalog is trusted content; learner text never comes here.
func renderCatalog(md goldmark.Markdown, cat *exercise.Catalog) (*docs, error) {
	d := &docs{
		chapter:     map[string]template.HTML{},
		statement:   map[string]template.HTML{},
		explanation: map[string]template.HTML{},
		solution:    map[string]template.HTML{},
	}
	render := func(what, src string) (template.HTML, error) {
		var b bytes.Buffer
		if err := md.Convert([]byte(src), &b); err != nil {
			return "", fmt.Errorf("render %s: %w", what, err)
		}
		return template.HTML(b.String()), nil
	}
	var err error
	for _, ch := range cat.Chapters {
		if d.chapter[ch.Slug], err = render("chapter "+ch.Slug, ch.Body); err != nil {
			return nil, err
		}
	}
	for _, e := range cat.Exercises {
		if d.statement[e.Slug], err = render(e.Slug+" statement", e.Statement); err != nil {
			return nil, err
		}
		if d.explanation[e.Slug], err = render(e.Slug+" explanation", e.Explanation); err != nil {
			return nil, err
		}
		// A fence longer than any backtick run in the code keeps it intact.
		fence := strings.Repeat("`", max(3, longestRun(string(e.Solution), '`')+1))
		if d.solution[e.Slug], err = render(e.Slug+" solution", fence+"go\n"+string(e.Solution)+"\n"+fence+"\n"); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// chromaCSS is the stylesheet for highlighted code in both themes; the dark
// rules apply under <html data-theme="dark">.
func chromaCSS() ([]byte, error) {
	var light, dark bytes.Buffer
	f := chromahtml.New(chromahtml.WithClasses(true))
	if err := f.WriteCSS(&light, styles.Get(lightCodeStyle)); err != nil {
		return nil, fmt.Errorf("chroma css: %w", err)
	}
	if err := f.WriteCSS(&dark, styles.Get(darkCodeStyle)); err != nil {
		return nil, fmt.Errorf("chroma css: %w", err)
	}
	scoped := strings.ReplaceAll(dark.String(), "*/ .", "*/ [data-theme=dark] .")
	return append(light.Bytes(), scoped...), nil
}

// pages holds one template set per page, each the layout plus that page.
type pages map[string]*template.Template

func parsePages(funcs template.FuncMap) (pages, error) {
	base, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html")
	if err != nil {
		return nil, fmt.Errorf("parse layout: %w", err)
	}
	names, err := fs.Glob(templateFS, "templates/page_*.html")
	if err != nil {
		return nil, err
	}
	p := pages{}
	for _, name := range names {
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFS(templateFS, name); err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		p[strings.TrimSuffix(strings.TrimPrefix(name, "templates/page_"), ".html")] = t
	}
	return p, nil
}

func templateFuncs(assetURL func(string) string) template.FuncMap {
	return template.FuncMap{
		"asset": assetURL,
		// inert shows text the learner's code chose (verdict.Inert).
		"inert": verdict.Inert,
		"list":  func(xs ...string) []string { return xs },
		"when": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		},
		"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	}
}
