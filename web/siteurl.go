package web

import (
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// siteURL says where browsers reach the site, for links handed out (the
// instructor pages' join link): the public URL if one is set, else the
// request's host, over https when the request came so (directly or
// through a trusted proxy).
func (s *Server) siteURL(pub *url.URL) func(echo.Context) string {
	return func(c echo.Context) string {
		if pub != nil {
			u := *pub
			u.RawQuery, u.Fragment = "", ""
			return strings.TrimSuffix(u.String(), "/")
		}
		scheme := "http"
		if s.secure(c) {
			scheme = "https"
		}
		return scheme + "://" + c.Request().Host
	}
}
