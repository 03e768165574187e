package runcenter

import (
	"bytes"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/sdk/errcode"
)

//go:embed assets
var assets embed.FS

// Server is the run center: its pages, forms and live updates. Serve it
// behind Guard.
type Server struct {
	cfg     Config
	csrfKey []byte
	mux     *http.ServeMux
	pages   map[string]*template.Template
	// streams ends the open /pulse streams when the listener shuts down.
	streams api.StreamStop
	// counts are the flow list's pressure line counts, kept between pages.
	counts flowCounts
}

// New returns the run center cfg describes. It fails when cfg has no
// client or an impossible token (see ValidateTokens).
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, csrfKey: make([]byte, 32), mux: http.NewServeMux(), pages: map[string]*template.Template{}}
	_, _ = rand.Read(s.csrfKey) // crypto/rand.Read never fails
	for _, name := range []string{"flows", "flow", "logs", "gates", "cron", "job", "triggers", "audit", "plugins", "login", "error", "confirm"} {
		files := []string{"assets/layout.html", "assets/actions.html", "assets/" + name + ".html"}
		// A page's sections may each have a file, named PAGE_SECTION.html.
		sections, _ := fs.Glob(assets, "assets/"+name+"_*.html") // the pattern is well-formed
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, append(files, sections...)...)
		if err != nil {
			return nil, fmt.Errorf("runcenter: parse the %s page: %w", name, err)
		}
		s.pages[name] = t
	}
	static, _ := fs.Sub(assets, "assets/static") // the directory is embedded
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		if len(s.cfg.Tokens) == 0 {
			http.Redirect(w, r, "/", http.StatusSeeOther) // nothing to log in with
			return
		}
		s.renderLogin(w, r, http.StatusOK, "")
	})
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.HandleFunc("POST /logout", s.logout)
	s.page("GET /{$}", "flows", s.flowsPage)
	s.page("GET /flows/{id}", "flow", s.flowPage)
	s.page("GET /flows/{id}/logs", "logs", s.logsPage)
	s.mux.HandleFunc("GET /flows/{id}/logs/download", s.downloadLog)
	s.mux.HandleFunc("GET /tasks/{id}/log", s.rawLog)
	s.mux.HandleFunc("GET /flows/{id}/timeline", s.timelinePart)
	s.mux.HandleFunc("POST /flows/{id}/cancel", s.cancel)
	s.page("GET /gates", "gates", s.gatesPage)
	s.mux.HandleFunc("POST /gates/decide", s.decide)
	s.page("GET /cron", "cron", s.cronPage)
	s.page("GET /cron/{ref}", "job", s.jobPage)
	s.page("GET /triggers", "triggers", s.triggersPage)
	s.page("GET /audit", "audit", s.auditPage)
	s.page("GET /plugins", "plugins", s.pluginsPage)
	s.mux.HandleFunc("GET /pulse", s.pulse)
	// Actions: each a confirmation page and the form it posts
	// (flowactions.go, cronactions.go).
	s.flowActionRoutes()
	s.cronActionRoutes()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, fmt.Errorf("%w: the run center has no page %s %s; start from the flows at /", errNoPage, r.Method, r.URL.Path))
	})
	return s, nil
}

// errNoPage is the error of a path the run center does not serve.
var errNoPage = errors.New("no such page")

// ServeHTTP serves the pages and forms; wrap it in Guard.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// view is what every page's template gets: the page's own data and what
// the layout needs.
type view struct {
	Title  string
	Nav    []navLink
	Who    string
	Logout bool
	CSRF   string
	// Pulse, when set, is the page URL that /pulse renders again to
	// follow it; Stream is a flow's history stream.
	Pulse  string
	Stream string
	Data   any
}

type navLink struct {
	Name, Href string
	On         bool
}

// streamer is the data of a page that follows a history stream instead
// of /pulse; stream is the stream's URL, or "" to follow /pulse.
type streamer interface{ stream() string }

// loader reads a page's data from r; title names the page.
type loader func(r *http.Request) (title string, data any, err error)

// page serves template name with what load reads. With ?part=main only
// the page's main part is rendered (what /pulse and the flow page's
// redraws fetch).
func (s *Server) page(pattern, name string, load loader) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		title, data, err := load(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		v := s.newView(r, name, title, data)
		if st, ok := data.(streamer); ok && st.stream() != "" {
			v.Stream = st.stream()
		} else {
			v.Pulse = r.URL.Path
			if q := pulseQuery(r); q != "" {
				v.Pulse += "?" + q
			}
		}
		tmpl := "layout"
		if r.URL.Query().Get("part") == "main" {
			tmpl = "main"
		}
		s.render(w, name, tmpl, http.StatusOK, v)
	})
}

// pulseQuery is r's query without part.
func pulseQuery(r *http.Request) string {
	q := r.URL.Query()
	q.Del("part")
	return q.Encode()
}

// newView fills in the layout's part of a page for r.
func (s *Server) newView(r *http.Request, active, title string, data any) view {
	who := callerOf(r)
	v := view{Title: title, Who: who.name, Logout: who.token != "", CSRF: s.csrfToken(who), Data: data}
	for _, l := range navPages {
		v.Nav = append(v.Nav, navLink{Name: l.name, Href: l.href, On: active == l.page})
	}
	return v
}

// navPages are the links of the navigation, each with the page it marks.
var navPages = []struct{ name, href, page string }{
	{"Flows", "/", "flows"}, {"Gates", "/gates", "gates"}, {"Cron", "/cron", "cron"},
	{"Triggers", "/triggers", "triggers"},
	{"Audit", "/audit", "audit"}, {"Plugins", "/plugins", "plugins"},
}

// render executes template tmpl of page into a buffer, so that a failure
// answers a whole error page instead of half a page.
func (s *Server) render(w http.ResponseWriter, page, tmpl string, status int, v view) {
	var buf bytes.Buffer
	if err := s.pages[page].ExecuteTemplate(&buf, tmpl, v); err != nil {
		s.cfg.Logger.Error("render page", "page", page, "error", err)
		http.Error(w, "500 the run center failed to draw the page "+page+"; see the gateway log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorPage is the data of the error page.
type errorPage struct {
	Status  int
	Message string
}

// fail answers err as an error page with the status its sentinel has in
// the API (404 for a missing flow, 409 for a stale or ended one, ...).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	if c, ok := errcode.Of(err); ok && c.HTTP != 0 {
		status = c.HTTP
	} else if errors.Is(err, errNoPage) {
		status = http.StatusNotFound
	}
	if status >= 500 && r.Context().Err() == nil {
		s.cfg.Logger.Error("run center request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	s.render(w, "error", "layout", status, s.newView(r, "", http.StatusText(status), errorPage{status, err.Error()}))
}

// loginPage is the data of the login form.
type loginPage struct {
	Next    string
	Problem string
}

// renderLogin answers the login form with status, and problem above it.
func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, status int, problem string) {
	next := r.PostFormValue("next")
	if r.Method == http.MethodGet && r.URL.Path != "/login" {
		next = r.URL.RequestURI()
	}
	if next == "" {
		next = r.URL.Query().Get("next")
	}
	s.render(w, "login", "layout", status, s.newView(r, "", "Log in", loginPage{Next: localPath(next), Problem: problem}))
}

// funcs are the helpers the templates use.
var funcs = template.FuncMap{
	"when":     when,
	"add":      func(a int64, b int) int64 { return a + int64(b) },
	"schedule": scheduleText,
	// streams are the tabs of the logs page.
	"streams": func() []string { return []string{"stdout", "stderr"} },
	// dict makes a map of its key, value pairs, to hand a partial
	// template more than one value.
	"dict": func(kv ...any) (map[string]any, error) {
		if len(kv)%2 != 0 {
			return nil, errors.New("dict takes key, value pairs")
		}
		m := make(map[string]any, len(kv)/2)
		for i := 0; i < len(kv); i += 2 {
			k, ok := kv[i].(string)
			if !ok {
				return nil, fmt.Errorf("dict key %v is not a string", kv[i])
			}
			m[k] = kv[i+1]
		}
		return m, nil
	},
}
