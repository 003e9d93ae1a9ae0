package instructor

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"

	"github.com/labstack/echo/v4"
)

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// handleExport downloads the class report as CSV (one row per learner),
// JSON, or one self-contained HTML file.
func (h *handler) handleExport(c echo.Context) error {
	cl := class(c)
	format := c.Param("format")
	ctypes := map[string]string{"csv": "text/csv; charset=utf-8", "json": "application/json", "html": "text/html; charset=utf-8"}
	ctype, ok := ctypes[format]
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "reports come as .csv, .json or .html")
	}
	r, _, err := h.loadReport(c.Request().Context(), cl)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	switch format {
	case "csv":
		err = r.WriteCSV(&buf)
	case "json":
		err = r.WriteJSON(&buf)
	case "html":
		err = r.WriteHTML(&buf)
	}
	if err != nil {
		return err
	}
	name := unsafeFileChars.ReplaceAllString(cl.Name, "-")
	if len(name) > 40 {
		name = name[:40]
	}
	hd := c.Response().Header()
	// An attachment: the HTML report carries inline styles the site's
	// policy forbids, and is meant to be saved and opened as a file.
	hd.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="class-%d-%s.%s"`, cl.ID, name, format))
	hd.Set("Cache-Control", "private, no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	return c.Blob(http.StatusOK, ctype, buf.Bytes())
}
