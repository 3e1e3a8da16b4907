"""End-to-end tests: a real uvicorn server, real HTTP, SQLite and PostgreSQL stores."""
