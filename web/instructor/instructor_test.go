package instructor

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"ctrljudge/judge/exercise"
	"ctrljudge/judge/records"
	"ctrljudge/judge/records/recordstest"
	"ctrljudge/judge/verdict"
)

const prefix = "/instructor"

type testServer struct {
	t        *testing.T
	e        *echo.Echo
	f        *recordstest.Fixture
	mu       sync.Mutex
	enqueued []*records.Submission
	refuse   bool // the queue refuses re-judges
}

func newTestServer(t *testing.T) *testServer {
	ts := &testServer{t: t, e: echo.New(), f: recordstest.Seed(t)}
	cat := fixtureCatalog()
	// The queue's part, as package judge/queue does it (tested there):
	// the re-judge's record, queued or, when refused, settled.
	rejudge := func(ctx context.Context, orig *records.Submission) (bool, error) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		ex, err := cat.Find(orig.Exercise)
		if err != nil {
			return false, err
		}
		s := &records.Submission{LearnerID: orig.LearnerID, Exercise: ex.Slug, ExerciseVersion: ex.Version,
			Mode: verdict.ModeSubmit, Code: orig.Code, Seed: orig.Seed, RejudgeOf: orig.ID}
		if err := ts.f.DB.CreateSubmission(ctx, s); err != nil {
			return false, err
		}
		if ts.refuse {
			return false, ts.f.DB.AbandonSubmission(ctx, s.ID, "not judged: queue full")
		}
		ts.enqueued = append(ts.enqueued, s)
		return true, nil
	}
	Register(ts.e.Group(prefix), Deps{DB: ts.f.DB, Catalog: cat, Rejudge: rejudge})
	return ts
}

// do sends a request with the given session cookie ("" for none).
func (ts *testServer) do(method, path, session string, form url.Values) *httptest.ResponseRecorder {
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: session})
	}
	rec := httptest.NewRecorder()
	ts.e.ServeHTTP(rec, req)
	return rec
}

func (ts *testServer) login(name, password string) string {
	ts.t.Helper()
	rec := ts.do(http.MethodPost, prefix+"/login", "", url.Values{"name": {name}, "password": {password}})
	if rec.Code != http.StatusSeeOther {
		ts.t.Fatalf("login %s: status %d; want 303", name, rec.Code)
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == sessionCookie {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
				ts.t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict", c)
			}
			return c.Value
		}
	}
	ts.t.Fatal("login set no session cookie")
	return ""
}

// fill puts the fixture's ids into a route pattern.
func (ts *testServer) fill(path string, class int64) string {
	f := ts.f
	subA, subB := f.Submissions[1], f.Submissions[4] // Ada's and Ben's accepted submits
	r := strings.NewReplacer(":class", fmt.Sprint(class), ":slug", "reconcile-loop",
		":learner", fmt.Sprint(f.Learners["Ada"].ID), ":a", fmt.Sprint(subA.ID), ":b", fmt.Sprint(subB.ID), ":format", "csv")
	return prefix + r.Replace(path)
}

func form(ts *testServer) url.Values {
	return url.Values{"name": {"New class"}, "exercise": {"reconcile-loop"}, "due": {"2026-04-01T12:00"}, "which": {"latest"}}
}

// TestEveryRouteRefusesOthers: 401 without an instructor session, 403 for
// another instructor's class, and success for the owner.
func TestEveryRouteRefusesOthers(t *testing.T) {
	ts := newTestServer(t)
	owner := ts.login("Grace", recordstest.OwnerPassword)
	other := ts.login("Mallory", recordstest.OtherPassword)
	_, learnerToken, err := ts.f.DB.SignInLearner(context.Background(), "Ada", ts.f.Class.JoinCode)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range protectedRoutes {
		path := ts.fill(r.Path, ts.f.Class.ID)
		classRoute := strings.Contains(r.Path, ":class")
		cases := []struct {
			who     string
			session string
			want    int
		}{
			{"nobody", "", http.StatusUnauthorized},
			{"bad token", "not-a-token", http.StatusUnauthorized},
			{"a learner's token", learnerToken, http.StatusUnauthorized},
		}
		if classRoute {
			cases = append(cases, struct {
				who     string
				session string
				want    int
			}{"another instructor", other, http.StatusForbidden})
		}
		for _, c := range cases {
			rec := ts.do(r.Method, path, c.session, form(ts))
			if rec.Code != c.want {
				t.Errorf("%s %s as %s: status %d; want %d", r.Method, path, c.who, rec.Code, c.want)
			}
		}
		rec := ts.do(r.Method, path, owner, form(ts))
		if rec.Code != http.StatusOK && rec.Code != http.StatusSeeOther {
			t.Errorf("%s %s as owner: status %d; want 200 or 303\n%s", r.Method, path, rec.Code, rec.Body)
		}
	}
	// The other instructor's own class works for them, not for the owner.
	path := ts.fill("/classes/:class", ts.f.OtherClass.ID)
	if rec := ts.do(http.MethodGet, path, other, nil); rec.Code != http.StatusOK {
		t.Errorf("Mallory's own class: %d", rec.Code)
	}
	if rec := ts.do(http.MethodGet, path, owner, nil); rec.Code != http.StatusForbidden {
		t.Errorf("Grace on Mallory's class: %d; want 403", rec.Code)
	}
	// Learners and submissions of another class are not reachable through one's own.
	eve := ts.f.Submissions[len(ts.f.Submissions)-3]
	for _, p := range []string{
		fmt.Sprintf("/classes/%d/learners/%d", ts.f.Class.ID, ts.f.Learners["Eve"].ID),
		fmt.Sprintf("/classes/%d/similarity/%d/%d", ts.f.Class.ID, ts.f.Submissions[1].ID, eve.ID),
	} {
		if rec := ts.do(http.MethodGet, prefix+p, owner, nil); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d; want 404 (another class's record)", p, rec.Code)
		}
	}
}

// TestRoutesListed: every registered route is either public or in protectedRoutes,
// so a new route cannot miss the authorization test.
func TestRoutesListed(t *testing.T) {
	ts := newTestServer(t)
	public := map[string]bool{"GET /login": true, "POST /login": true, "POST /logout": true, "GET /static/" + cssName: true,
		"GET /static/" + jsName: true, "GET ": true}
	listed := map[string]bool{}
	for _, r := range protectedRoutes {
		listed[r.Method+" "+r.Path] = true
	}
	for _, r := range ts.e.Routes() {
		key := r.Method + " " + strings.TrimPrefix(r.Path, prefix)
		if !public[key] && !listed[key] && strings.HasPrefix(r.Path, prefix) {
			t.Errorf("route %s is neither public nor in protectedRoutes", key)
		}
	}
	if rec := ts.do(http.MethodGet, prefix, "", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("GET %s: %d; want 401", prefix, rec.Code)
	}
	// The 401 page is the sign-in form, posting where the group is mounted.
	rec := ts.do(http.MethodGet, prefix+"/classes/1", "", nil)
	body := rec.Body.String()
	if !strings.Contains(body, `action="`+prefix+`/login"`) || !strings.Contains(body, `href="`+prefix+`/static/`+cssName+`"`) ||
		!strings.Contains(body, `value="`+prefix+`/classes/1"`) {
		t.Errorf("401 page links wrongly:\n%s", body)
	}
}

func TestCrossSitePostRefused(t *testing.T) {
	ts := newTestServer(t)
	owner := ts.login("Grace", recordstest.OwnerPassword)
	req := httptest.NewRequest(http.MethodPost, prefix+"/classes", strings.NewReader("name=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: owner})
	rec := httptest.NewRecorder()
	ts.e.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("cross-site POST: %d; want 403", rec.Code)
	}
}

func TestWrongPassword(t *testing.T) {
	ts := newTestServer(t)
	rec := ts.do(http.MethodPost, prefix+"/login", "", url.Values{"name": {"Grace"}, "password": {"guess guess"}})
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "Wrong name or password") {
		t.Errorf("wrong password: %d", rec.Code)
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == sessionCookie {
			t.Error("wrong password set a session cookie")
		}
	}
}

// TestPayloadsEscaped: the fixture's HTML payloads (class name, learner
// name, learner code) render escaped on every page and export.
func TestPayloadsEscaped(t *testing.T) {
	ts := newTestServer(t)
	owner := ts.login("Grace", recordstest.OwnerPassword)
	f := ts.f
	xssLearner := f.Learners[recordstest.XSS].ID
	var cleoXSS *records.Submission
	for _, s := range f.Submissions {
		if strings.Contains(s.Code, recordstest.XSS) {
			cleoXSS = s
		}
	}
	cleo := f.Learners["Cleo"].ID
	pages := []string{
		"/",
		fmt.Sprintf("/classes/%d", f.Class.ID),
		fmt.Sprintf("/classes/%d?sort=reconcile-loop&desc=1", f.Class.ID),
		fmt.Sprintf("/classes/%d/exercises/reconcile-loop", f.Class.ID),
		fmt.Sprintf("/classes/%d/learners/%d", f.Class.ID, xssLearner),
		fmt.Sprintf("/classes/%d/learners/%d?show=%d&a=%d&b=%d", f.Class.ID, cleo, cleoXSS.ID, cleoXSS.ID-2, cleoXSS.ID),
		fmt.Sprintf("/classes/%d/similarity", f.Class.ID),
		fmt.Sprintf("/classes/%d/similarity/%d/%d", f.Class.ID, cleoXSS.ID, f.Submissions[11].ID),
		fmt.Sprintf("/classes/%d/report.html", f.Class.ID),
		fmt.Sprintf("/classes/%d/report.json", f.Class.ID),
	}
	for _, p := range pages {
		rec := ts.do(http.MethodGet, prefix+p, owner, nil)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d", p, rec.Code)
			continue
		}
		for _, bad := range []string{"<script>alert", "<img src=x"} {
			if strings.Contains(body, bad) {
				t.Errorf("GET %s: %q unescaped", p, bad)
			}
		}
		if strings.HasSuffix(p, ".json") {
			continue
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("GET %s: the escaped payload is missing (was the name or code shown at all?)", p)
		}
	}
	rec := ts.do(http.MethodGet, prefix+fmt.Sprintf("/classes/%d/report.csv", f.Class.ID), owner, nil)
	if strings.Contains(rec.Body.String(), "\n=") || strings.Contains(rec.Body.String(), ",=") || !strings.Contains(rec.Body.String(), `'=HYPERLINK`) {
		t.Errorf("CSV export does not neutralise formulas:\n%s", rec.Body)
	}
	if cd := rec.Header().Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || strings.ContainsAny(cd, "<>") {
		t.Errorf("Content-Disposition %q", cd)
	}
}

func TestCreateClassAndDueDate(t *testing.T) {
	ts := newTestServer(t)
	owner := ts.login("Grace", recordstest.OwnerPassword)
	rec := ts.do(http.MethodPost, prefix+"/classes", owner, url.Values{"name": {"Spring cohort"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("create class: %d", rec.Code)
	}
	loc := rec.Header().Get("Location")
	cs, _ := ts.f.DB.InstructorClasses(context.Background(), ts.f.Owner.ID)
	if cs[0].Name != "Spring cohort" || !strings.HasPrefix(loc, fmt.Sprintf("%s/classes/%d?", prefix, cs[0].ID)) {
		t.Errorf("created %+v, redirected to %s", cs[0], loc)
	}
	if rec := ts.do(http.MethodPost, prefix+"/classes", owner, url.Values{"name": {"  "}}); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("blank class name: %d; want 422", rec.Code)
	}
	path := fmt.Sprintf("%s/classes/%d/due", prefix, cs[0].ID)
	if rec := ts.do(http.MethodPost, path, owner, url.Values{"exercise": {"reconcile-loop"}, "due": {"2026-05-01T17:30"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("set due: %d %s", rec.Code, rec.Body)
	}
	due, _ := ts.f.DB.DueDates(context.Background(), cs[0].ID)
	if got := due["reconcile-loop"].Format("2006-01-02T15:04"); got != "2026-05-01T17:30" {
		t.Errorf("due date %s", got)
	}
	for _, bad := range []url.Values{{"exercise": {"nope"}, "due": {"2026-05-01T17:30"}}, {"exercise": {"reconcile-loop"}, "due": {"tomorrow"}}} {
		if rec := ts.do(http.MethodPost, path, owner, bad); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("due %v: %d; want 422", bad, rec.Code)
		}
	}
}

func TestRejudge(t *testing.T) {
	ts := newTestServer(t)
	owner := ts.login("Grace", recordstest.OwnerPassword)
	ctx := context.Background()
	path := fmt.Sprintf("%s/classes/%d/exercises/reconcile-loop/rejudge", prefix, ts.f.Class.ID)
	rec := ts.do(http.MethodPost, path, owner, url.Values{"which": {"best"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("re-judge: %d %s", rec.Code, rec.Body)
	}
	// Four learners submitted reconcile-loop in the class; Ada's best was
	// already re-judged at v2 by the fixture, leaving Ben, Cleo and the formula one.
	if len(ts.enqueued) != 3 {
		t.Fatalf("%d enqueued; want 3", len(ts.enqueued))
	}
	for _, s := range ts.enqueued {
		orig, err := ts.f.DB.Submission(ctx, s.RejudgeOf)
		if err != nil {
			t.Fatal(err)
		}
		if s.ExerciseVersion != "v2" || s.Code != orig.Code || s.State != records.StateQueued || s.Mode != "submit" || s.LearnerID != orig.LearnerID {
			t.Errorf("re-judge %+v of %+v", s, orig)
		}
		if orig.State != records.StateDone || orig.ExerciseVersion != "v1" {
			t.Errorf("original changed: %+v", orig)
		}
	}
	// Pressing again queues nothing new.
	ts.do(http.MethodPost, path, owner, url.Values{"which": {"best"}})
	if len(ts.enqueued) != 3 {
		t.Errorf("second press: %d enqueued; want still 3", len(ts.enqueued))
	}
}

// TestRejudgeRefused: when the queue refuses, the new rows are settled as
// not judged, never left queued.
func TestRejudgeRefused(t *testing.T) {
	ts := newTestServer(t)
	ts.refuse = true
	owner := ts.login("Grace", recordstest.OwnerPassword)
	ctx := context.Background()
	rec := ts.do(http.MethodPost, fmt.Sprintf("%s/classes/%d/exercises/reconcile-loop/rejudge", prefix, ts.f.Class.ID), owner, url.Values{"which": {"latest"}})
	if rec.Code != http.StatusSeeOther || !strings.Contains(rec.Header().Get("Location"), "could+not+be+queued") {
		t.Errorf("refused re-judge: %d, %s", rec.Code, rec.Header().Get("Location"))
	}
	subs, _ := ts.f.DB.ClassSubmissions(ctx, ts.f.Class.ID)
	abandoned := 0
	for _, s := range subs {
		if s.RejudgeOf != 0 && s.ExerciseVersion == "v2" && s.State == records.StateQueued {
			t.Errorf("re-judge %d left queued after the queue refused it", s.ID)
		}
		if s.RejudgeOf != 0 && s.State == records.StateNotJudged && strings.Contains(s.Note, "queue full") {
			abandoned++
		}
	}
	if abandoned != 3 { // Ada's latest was already re-judged at v2
		t.Errorf("%d re-judges settled as not judged; want 3", abandoned)
	}
}

func TestMatrixSort(t *testing.T) {
	ts := newTestServer(t)
	owner := ts.login("Grace", recordstest.OwnerPassword)
	rec := ts.do(http.MethodGet, fmt.Sprintf("%s/classes/%d?sort=solved&desc=1", prefix, ts.f.Class.ID), owner, nil)
	body := rec.Body.String()
	ada, ben, cleo := strings.Index(body, ">Ada<"), strings.Index(body, ">Ben<"), strings.Index(body, ">Cleo<")
	if ada < 0 || ben < 0 || cleo < 0 || !(ada < ben && ben < cleo) {
		t.Errorf("sorted by solved: Ada %d, Ben %d, Cleo %d; want Ada, Ben (1 solved, more submits), then Cleo", ada, ben, cleo)
	}
	rec = ts.do(http.MethodGet, fmt.Sprintf("%s/classes/%d?sort=owner-refs&desc=1", prefix, ts.f.Class.ID), owner, nil)
	body = rec.Body.String()
	if dev := strings.Index(body, ">Dev<"); dev < 0 || dev > strings.Index(body, ">Ada<") {
		t.Error("sorted by owner-refs: Dev (who solved it) should come first")
	}
}

// fixtureCatalog is the catalog that the records fixture was made against.
func fixtureCatalog() *exercise.Catalog {
	return &exercise.Catalog{Exercises: []*exercise.Exercise{{Number: recordstest.ExerciseNumber, Slug: recordstest.ExerciseSlug,
		Title: recordstest.ExerciseTitle, Chapter: recordstest.ExerciseChapter, Version: recordstest.ExerciseVersion,
		Starter: []byte(recordstest.Starter), Solution: []byte(recordstest.Solution)}}}
}

// TestLinksWork: every link on the matrix and the learner pages is a
// path with a query encoded once, and following it answers 200 with what
// it names (the exercise filter, the submission shown, the diff).
func TestLinksWork(t *testing.T) {
	ts := newTestServer(t)
	owner := ts.login("Grace", recordstest.OwnerPassword)
	href := regexp.MustCompile(`href="([^"]*)"`)
	seen := map[string]bool{}
	var follow func(path string, depth int)
	follow = func(path string, depth int) {
		rec := ts.do(http.MethodGet, path, owner, nil)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d", path, rec.Code)
			return
		}
		for _, m := range href.FindAllStringSubmatch(rec.Body.String(), -1) {
			u := html.UnescapeString(m[1])
			if strings.Contains(strings.ToLower(u), "%3d") || strings.Contains(strings.ToLower(u), "%26") {
				t.Errorf("%s links to %q: its query is escaped twice", path, u)
			}
			if !strings.HasPrefix(u, prefix+"/classes/") || strings.Contains(u, "/report.") || seen[u] {
				continue
			}
			seen[u] = true
			if depth > 0 {
				follow(u, depth-1)
			}
		}
	}
	follow(fmt.Sprintf("%s/classes/%d", prefix, ts.f.Class.ID), 2)
	ada := ts.f.Learners["Ada"].ID
	var filter, show, compare bool
	for u := range seen {
		switch {
		case strings.Contains(u, fmt.Sprintf("/learners/%d?exercise=reconcile-loop&show=", ada)):
			show = true
			body := ts.do(http.MethodGet, u, owner, nil).Body.String()
			if !strings.Contains(body, "<h2>Submission ") {
				t.Errorf("%s shows no submission", u)
			}
		case strings.HasSuffix(u, fmt.Sprintf("/learners/%d?exercise=reconcile-loop", ada)):
			filter = true
		case strings.Contains(u, fmt.Sprintf("/learners/%d?a=", ada)) || strings.Contains(u, "&a="):
			compare = true
			body := ts.do(http.MethodGet, u, owner, nil).Body.String()
			if !strings.Contains(body, "Changes from ") && !strings.Contains(body, "have the same code") {
				t.Errorf("%s compares nothing", u)
			}
		}
	}
	if !filter || !show || !compare {
		t.Errorf("links seen: filter %v, show %v, compare %v; all: %v", filter, show, compare, seen)
	}
}

// TestJoinLinkAndLocalDue: the matrix hands out a join link on the site's
// address; a due date sent as a UTC instant by the page's script is kept.
func TestJoinLinkAndLocalDue(t *testing.T) {
	ts := newTestServer(t)
	owner := ts.login("Grace", recordstest.OwnerPassword)
	path := fmt.Sprintf("%s/classes/%d", prefix, ts.f.Class.ID)
	body := ts.do(http.MethodGet, path, owner, nil).Body.String()
	if want := `value="http://example.com/signin?code=` + ts.f.Class.JoinCode + `"`; !strings.Contains(body, want) {
		t.Errorf("matrix lacks the join link %s", want)
	}
	rec := ts.do(http.MethodPost, path+"/due", owner, url.Values{"exercise": {"reconcile-loop"}, "due": {"2026-04-01T14:00"},
		"due_utc": {"2026-04-01T12:00:00.000Z"}, "tz": {"Europe/Paris"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("set due: %d %s", rec.Code, rec.Body)
	}
	if loc := rec.Header().Get("Location"); !strings.Contains(loc, "12%3A00+UTC") || !strings.Contains(loc, "Europe%2FParis") {
		t.Errorf("confirmation %q", loc)
	}
	due, err := ts.f.DB.DueDates(context.Background(), ts.f.Class.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := due["reconcile-loop"]; !got.Equal(time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("due %v; want 12:00 UTC", got)
	}
	body = ts.do(http.MethodGet, path, owner, nil).Body.String()
	if !strings.Contains(body, `data-utc="2026-04-01T12:00:00Z"`) || !strings.Contains(body, `<time class="local" datetime="2026-04-01T12:00:00Z">`) {
		t.Error("the matrix does not give the script the due date's instant")
	}
}
