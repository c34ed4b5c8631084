// Go/Gin reference for the benchmark (scripts/bench.mjs): a plain Go + Gin + database/sql
// implementation of the same books API (same routes, status codes and JSON envelopes as
// docs/api.md). It is the reference the service's speed is compared with, side by
// side with the service on the same machine. It is not part of the service and is not shipped.
//
// Deliberately plain: gin.New() + gin.Recovery() in release mode (GIN_LOGGER=1 adds gin's
// request logger), database/sql with its default pool, HS256 tokens via golang-jwt;
// SQLite through mattn/go-sqlite3 (WAL, synchronous=NORMAL, busy_timeout=5000),
// PostgreSQL through lib/pq.
//
// Build (GOPATH mode, offline, from Debian packages):
//
//	apt-get install -y golang-go golang-github-gin-gonic-gin-dev golang-github-mattn-go-sqlite3-dev \
//	  golang-github-lib-pq-dev golang-github-golang-jwt-jwt-dev
//	cd bench/go-gin && GO111MODULE=off GOPATH=/usr/share/gocode:$(mktemp -d) GOFLAGS= go build -o /tmp/go-gin .
//
// Run: PORT (default 8080), DB_URL (sqlite:PATH or postgres://…; default sqlite:books.db),
// SECRET_TOKEN (HMAC key of the tokens). `npm run bench` builds and runs it by itself.
package main

import (
	"database/sql"
	"errors"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
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
	db       *sql.DB
	isSQLite bool
	secret   []byte
)

func respond(c *gin.Context, status int, message string, data interface{}) {
	c.JSON(status, gin.H{"status": status, "message": message, "data": data})
}

// q turns $N placeholders into ?N for SQLite.
func q(query string) string {
	if isSQLite {
		return strings.ReplaceAll(query, "$", "?")
	}
	return query
}

func openDB(url string) {
	var err error
	switch {
	case strings.HasPrefix(url, "sqlite:"):
		isSQLite = true
		path := strings.TrimPrefix(url, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		dsn := "file:" + path + "?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000"
		db, err = sql.Open("sqlite3", dsn)
		if err == nil {
			_, err = db.Exec(`CREATE TABLE IF NOT EXISTS books (
				id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, author TEXT NOT NULL, year INTEGER NOT NULL)`)
		}
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		db, err = sql.Open("postgres", url)
		if err == nil {
			_, err = db.Exec(`CREATE TABLE IF NOT EXISTS books (
				id BIGSERIAL PRIMARY KEY, title TEXT NOT NULL, author TEXT NOT NULL, year INTEGER NOT NULL)`)
		}
	default:
		log.Fatalf("unsupported DB_URL %q", url)
	}
	if err != nil {
		log.Fatalf("database: %v", err)
	}
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
	err := db.QueryRow(q(`INSERT INTO books (title, author, year) VALUES ($1, $2, $3) RETURNING id`),
		b.Title, b.Author, b.Year).Scan(&b.ID)
	if err != nil {
		respond(c, http.StatusInternalServerError, "Internal server error", nil)
		return
	}
	respond(c, http.StatusCreated, "Book created successfully", b)
}

func listBooks(c *gin.Context) {
	rows, err := db.Query(`SELECT id, title, author, year FROM books ORDER BY id`)
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
	err := db.QueryRow(q(`SELECT id, title, author, year FROM books WHERE id = $1`), id).
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
	res, err := db.Exec(q(`UPDATE books SET title = $1, author = $2, year = $3 WHERE id = $4`),
		b.Title, b.Author, b.Year, id)
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
	res, err := db.Exec(q(`DELETE FROM books WHERE id = $1`), id)
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
