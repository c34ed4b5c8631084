// Go/Gin reference for the benchmark (scripts/bench.mjs): a plain Go + Gin + database/sql
// implementation of the same books API (same routes, status codes and JSON envelopes as
// docs/api.md). It is the reference the service's speed is compared with, side by
// side with the service on the same machine. It is not part of the service and is not shipped.
//
// Plain but tuned as a Go developer would for 64 concurrent clients: gin.New() + gin.Recovery()
// in release mode (GIN_LOGGER=1 adds gin's request logger), HS256 tokens via golang-jwt,
// prepared statements, and database/sql pools sized on purpose (README.md "Tuning"):
//   - PostgreSQL (lib/pq) and MySQL/MariaDB (go-sql-driver/mysql): one fixed pool,
//     SetMaxOpenConns = SetMaxIdleConns = DB_POOL_MAX (default 10, the service's default),
//     connections kept, so none is opened under load;
//   - SQLite (mattn/go-sqlite3, WAL, synchronous=NORMAL, busy_timeout=5000): one writer
//     connection (SetMaxOpenConns(1), BEGIN IMMEDIATE) for every INSERT/UPDATE/DELETE, so writers
//     queue in Go instead of fighting for the write lock, and a separate read pool of
//     SQLITE_READERS connections (default 2 × GOMAXPROCS, at least 4), all kept open.
//
// Build (GOPATH mode, offline, from Debian packages):
//
//	apt-get install -y golang-go golang-github-gin-gonic-gin-dev golang-github-mattn-go-sqlite3-dev \
//	  golang-github-lib-pq-dev golang-github-golang-jwt-jwt-dev golang-github-go-sql-driver-mysql-dev
//	cd bench/go-gin && GO111MODULE=off GOPATH=/usr/share/gocode:$(mktemp -d) GOFLAGS= go build -o /tmp/go-gin .
//
// Tuning and why: README.md. Run: PORT (default 8080), DB_URL (sqlite:PATH, postgres://… or
// mysql://user:pass@host:port/db, also mariadb://; default sqlite:books.db), SECRET_TOKEN (HMAC
// key of the tokens), DB_POOL_MAX (PostgreSQL and MySQL pool, default 10),
// SQLITE_READERS (SQLite read pool, default max(4, 2 × GOMAXPROCS)). `npm run bench` builds and runs it by itself.
package main

import (
	"database/sql"
	"errors"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-sql-driver/mysql"
	"github.com/golang-jwt/jwt"
	_ "github.com/lib/pq"
	_ "github.com/mattn/go-sqlite3"
)

type Book struct {
	ID     int64  `json:"id"`
	Title  string `json:"title"`
	Author string `json:"author"`
	Year   int    `json:"year"`
}

type bookInput struct {
	Title  string `json:"title" binding:"required"`
	Author string `json:"author" binding:"required"`
	Year   int    `json:"year" binding:"required"`
}

type bookPatch struct {
	Title  *string `json:"title"`
	Author *string `json:"author"`
	Year   *int    `json:"year"`
}

type credentials struct {
	Username string `json:"username" binding:"required"`
	Password string `json:"password" binding:"required"`
}

var (
	db       *sql.DB // reads (and on PostgreSQL, everything)
	writeDB  *sql.DB // writes: on SQLite one connection, on PostgreSQL the same pool as db
	isSQLite bool
	isMySQL  bool
	secret   []byte

	stmtInsert, stmtSelectOne, stmtSelectAll, stmtUpdate, stmtDelete *sql.Stmt
)

func envInt(name string, fallback int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return fallback
}

func prepare(target *sql.DB, query string) *sql.Stmt {
	stmt, err := target.Prepare(q(query))
	if err != nil {
		log.Fatalf("prepare %q: %v", query, err)
	}
	return stmt
}

func respond(c *gin.Context, status int, message string, data interface{}) {
	c.JSON(status, gin.H{"status": status, "message": message, "data": data})
}

var numbered = regexp.MustCompile(`\$\d+`)

// q turns $N placeholders into ?N for SQLite, and into ? for MySQL (every query binds them in order).
func q(query string) string {
	if isSQLite {
		return strings.ReplaceAll(query, "$", "?")
	}
	if isMySQL {
		return numbered.ReplaceAllString(query, "?")
	}
	return query
}

// mysqlDSN turns mysql://user:pass@host:port/db into the driver's DSN. clientFoundRows: an UPDATE
// that changes nothing still counts its row, so a PUT of unchanged values is 200, not 404.
func mysqlDSN(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	cfg.Collation = "utf8mb4_bin"
	cfg.ClientFoundRows = true
	return cfg.FormatDSN(), nil
}

// pooled sizes a client-server pool: DB_POOL_MAX connections (default 10), opened once and kept.
func pooled(target *sql.DB) {
	size := envInt("DB_POOL_MAX", 10)
	target.SetMaxOpenConns(size)
	target.SetMaxIdleConns(size)
	target.SetConnMaxLifetime(0)
	target.SetConnMaxIdleTime(0)
}

func openDB(url string) {
	var err error
	switch {
	case strings.HasPrefix(url, "sqlite:"):
		isSQLite = true
		path := strings.TrimPrefix(url, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		dsn := "file:" + path + "?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000"
		// The writer first: it creates the file and the table.
		writeDB, err = sql.Open("sqlite3", dsn+"&_txlock=immediate")
		if err == nil {
			writeDB.SetMaxOpenConns(1)
			writeDB.SetMaxIdleConns(1)
			writeDB.SetConnMaxLifetime(0)
			_, err = writeDB.Exec(`CREATE TABLE IF NOT EXISTS books (
				id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, author TEXT NOT NULL, year INTEGER NOT NULL)`)
		}
		if err == nil {
			readers := envInt("SQLITE_READERS", max(4, 2*runtime.GOMAXPROCS(0)))
			db, err = sql.Open("sqlite3", dsn)
			if err == nil {
				db.SetMaxOpenConns(readers)
				db.SetMaxIdleConns(readers)
				db.SetConnMaxLifetime(0)
			}
		}
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		db, err = sql.Open("postgres", url)
		if err == nil {
			pooled(db)
			writeDB = db
			_, err = db.Exec(`CREATE TABLE IF NOT EXISTS books (
				id BIGSERIAL PRIMARY KEY, title TEXT NOT NULL, author TEXT NOT NULL, year INTEGER NOT NULL)`)
		}
	case strings.HasPrefix(url, "mysql://"), strings.HasPrefix(url, "mariadb://"):
		// INSERT … RETURNING below needs MariaDB 10.5 or later (MySQL has none).
		isMySQL = true
		var dsn string
		dsn, err = mysqlDSN(url)
		if err == nil {
			db, err = sql.Open("mysql", dsn)
		}
		if err == nil {
			pooled(db)
			writeDB = db
			_, err = db.Exec(`CREATE TABLE IF NOT EXISTS books (
				id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, title VARCHAR(500) NOT NULL,
				author VARCHAR(500) NOT NULL, year INT NOT NULL
			) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`)
		}
	default:
		log.Fatalf("unsupported DB_URL %q", url)
	}
	if err != nil {
		log.Fatalf("database: %v", err)
	}
	stmtInsert = prepare(writeDB, `INSERT INTO books (title, author, year) VALUES ($1, $2, $3) RETURNING id`)
	stmtUpdate = prepare(writeDB, `UPDATE books SET title = $1, author = $2, year = $3 WHERE id = $4`)
	stmtDelete = prepare(writeDB, `DELETE FROM books WHERE id = $1`)
	stmtSelectOne = prepare(db, `SELECT id, title, author, year FROM books WHERE id = $1`)
	stmtSelectAll = prepare(db, `SELECT id, title, author, year FROM books ORDER BY id`)
}

func max(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func authRequired(c *gin.Context) {
	raw := c.GetHeader("Authorization")
	raw = strings.TrimSpace(strings.TrimPrefix(raw, "Bearer "))
	if raw == "" {
		respond(c, http.StatusUnauthorized, "Authorization token required", nil)
		c.Abort()
		return
	}
	tok, err := jwt.Parse(raw, func(t *jwt.Token) (interface{}, error) {
		if _, ok := t.Method.(*jwt.SigningMethodHMAC); !ok {
			return nil, errors.New("unexpected signing method")
		}
		return secret, nil
	})
	if err != nil || !tok.Valid {
		respond(c, http.StatusUnauthorized, "Invalid token", nil)
		c.Abort()
		return
	}
	c.Next()
}

func postToken(c *gin.Context) {
	var cr credentials
	if err := c.ShouldBindJSON(&cr); err != nil {
		respond(c, http.StatusBadRequest, "Invalid request payload", nil)
		return
	}
	if cr.Username != "admin" || cr.Password != "password" {
		respond(c, http.StatusUnauthorized, "Invalid credentials", nil)
		return
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"exp": time.Now().Add(900 * time.Second).Unix()})
	s, err := tok.SignedString(secret)
	if err != nil {
		respond(c, http.StatusInternalServerError, "Internal server error", nil)
		return
	}
	respond(c, http.StatusOK, "Token generated successfully", gin.H{"token": s})
}

func parseID(c *gin.Context) (int64, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		respond(c, http.StatusNotFound, "Book not found", nil)
		return 0, false
	}
	return id, true
}

func createBook(c *gin.Context) {
	var in bookInput
	if err := c.ShouldBindJSON(&in); err != nil {
		respond(c, http.StatusBadRequest, "Invalid input", nil)
		return
	}
	b := Book{Title: in.Title, Author: in.Author, Year: in.Year}
	err := stmtInsert.QueryRow(b.Title, b.Author, b.Year).Scan(&b.ID)
	if err != nil {
		respond(c, http.StatusInternalServerError, "Internal server error", nil)
		return
	}
	respond(c, http.StatusCreated, "Book created successfully", b)
}

func listBooks(c *gin.Context) {
	rows, err := stmtSelectAll.Query()
	if err != nil {
		respond(c, http.StatusInternalServerError, "Internal server error", nil)
		return
	}
	defer rows.Close()
	books := []Book{}
	for rows.Next() {
		var b Book
		if err := rows.Scan(&b.ID, &b.Title, &b.Author, &b.Year); err != nil {
			respond(c, http.StatusInternalServerError, "Internal server error", nil)
			return
		}
		books = append(books, b)
	}
	if rows.Err() != nil {
		respond(c, http.StatusInternalServerError, "Internal server error", nil)
		return
	}
	respond(c, http.StatusOK, "Books retrieved successfully", books)
}

func findBook(id int64) (Book, error) {
	var b Book
	err := stmtSelectOne.QueryRow(id).
		Scan(&b.ID, &b.Title, &b.Author, &b.Year)
	return b, err
}

func getBook(c *gin.Context) {
	id, ok := parseID(c)
	if !ok {
		return
	}
	b, err := findBook(id)
	if err == sql.ErrNoRows {
		respond(c, http.StatusNotFound, "Book not found", nil)
		return
	} else if err != nil {
		respond(c, http.StatusInternalServerError, "Internal server error", nil)
		return
	}
	respond(c, http.StatusOK, "Book retrieved successfully", b)
}

func updateBook(c *gin.Context) {
	id, ok := parseID(c)
	if !ok {
		return
	}
	var p bookPatch
	if err := c.ShouldBindJSON(&p); err != nil {
		respond(c, http.StatusBadRequest, "Invalid input", nil)
		return
	}
	b, err := findBook(id)
	if err == sql.ErrNoRows {
		respond(c, http.StatusNotFound, "Book not found", nil)
		return
	} else if err != nil {
		respond(c, http.StatusInternalServerError, "Internal server error", nil)
		return
	}
	if p.Title != nil {
		b.Title = *p.Title
	}
	if p.Author != nil {
		b.Author = *p.Author
	}
	if p.Year != nil {
		b.Year = *p.Year
	}
	res, err := stmtUpdate.Exec(b.Title, b.Author, b.Year, id)
	if err != nil {
		respond(c, http.StatusInternalServerError, "Internal server error", nil)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		respond(c, http.StatusNotFound, "Book not found", nil)
		return
	}
	respond(c, http.StatusOK, "Book updated successfully", b)
}

func deleteBook(c *gin.Context) {
	id, ok := parseID(c)
	if !ok {
		return
	}
	res, err := stmtDelete.Exec(id)
	if err != nil {
		respond(c, http.StatusInternalServerError, "Internal server error", nil)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		respond(c, http.StatusNotFound, "Book not found", nil)
		return
	}
	respond(c, http.StatusOK, "Book deleted successfully", nil)
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	dbURL := os.Getenv("DB_URL")
	if dbURL == "" {
		dbURL = "sqlite:books.db"
	}
	secret = []byte(os.Getenv("SECRET_TOKEN"))
	openDB(dbURL)

	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	if os.Getenv("GIN_LOGGER") == "1" {
		r.Use(gin.Logger())
	}
	r.Use(gin.Recovery())

	r.POST("/token", postToken)
	auth := r.Group("/", authRequired)
	auth.POST("/book", createBook)
	auth.GET("/books", listBooks)
	auth.GET("/book/:id", getBook)
	auth.PUT("/book/:id", updateBook)
	auth.DELETE("/book/:id", deleteBook)

	log.Printf("listening on :%s", port)
	if err := r.Run(":" + port); err != nil {
		log.Fatal(err)
	}
}
