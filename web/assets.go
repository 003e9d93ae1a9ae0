package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"
)

// static holds the stylesheet, the page script and the editor bundle
// (built from web/assets by `make web` and committed).
//
//go:embed static
var staticFS embed.FS

// An asset is one static file, kept whole and gzipped.
type asset struct {
	body, gz []byte
	ctype    string
	hash     string
}

type assets struct{ byName map[string]*asset }

func loadAssets() (*assets, error) {
	a := &assets{byName: map[string]*asset{}}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		return a.add(strings.TrimPrefix(p, "static/"), b)
	})
	if err != nil {
		return nil, fmt.Errorf("load static assets: %w", err)
	}
	css, err := chromaCSS()
	if err != nil {
		return nil, err
	}
	if err := a.add("chroma.css", css); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *assets) add(name string, b []byte) error {
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := w.Write(b); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	a.byName[name] = &asset{body: b, gz: gz.Bytes(), ctype: ctype, hash: hex.EncodeToString(sum[:])[:12]}
	return nil
}

// url is an asset's address with its content hash, so that it can be
// cached for good.
func (a *assets) url(name string) string {
	if x, ok := a.byName[name]; ok {
		return "/static/" + name + "?v=" + x.hash
	}
	return "/static/" + name
}

// gzipBytes is the total gzipped size of the scripts and stylesheets.
func (a *assets) gzipBytes() int {
	n := 0
	for name, x := range a.byName {
		if strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".css") {
			n += len(x.gz)
		}
	}
	return n
}

// handleStatic serves an embedded asset. With the current hash in the
// query it may be cached for a year; otherwise it is revalidated by ETag.
func (s *Server) handleStatic(c echo.Context) error {
	x, ok := s.assets.byName[c.Param("name")]
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "no such file")
	}
	h := c.Response().Header()
	etag := `"` + x.hash + `"`
	h.Set("ETag", etag)
	h.Set("Vary", "Accept-Encoding")
	if c.QueryParam("v") == x.hash {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if match := c.Request().Header.Get("If-None-Match"); match == etag {
		return c.NoContent(http.StatusNotModified)
	}
	body := x.body
	if acceptsGzip(c.Request()) {
		h.Set("Content-Encoding", "gzip")
		body = x.gz
	}
	return c.Blob(http.StatusOK, x.ctype, body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
