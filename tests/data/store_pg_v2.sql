-- A PostgreSQL database as gamenight wrote it before server/sqlstore.py (PG_MIGRATIONS of store_pg.py then):
-- tests/server/test_store_backends.py checks that new databases and upgraded ones get exactly this schema.
-- version 1 (migration 0)
CREATE TABLE gamenight_schema (version INTEGER NOT NULL);
INSERT INTO gamenight_schema (version) VALUES (1);
    CREATE TABLE rooms (
        code TEXT PRIMARY KEY,
        game TEXT NOT NULL,
        options TEXT NOT NULL,
        room_options TEXT NOT NULL,
        host_name TEXT NOT NULL,
        private BOOLEAN NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        game_no INTEGER NOT NULL DEFAULT 0,
        closed BOOLEAN NOT NULL DEFAULT FALSE,
        host_token_hash TEXT,
        closed_at DOUBLE PRECISION,
        owner_epoch BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX rooms_closed ON rooms(closed, closed_at);
    CREATE TABLE seats (
        room TEXT NOT NULL REFERENCES rooms(code),
        seat INTEGER NOT NULL,
        name TEXT,
        token_hash TEXT,
        ai_level INTEGER,
        ai_bot TEXT,
        bot BOOLEAN NOT NULL DEFAULT FALSE,
        PRIMARY KEY (room, seat)
    );
    CREATE TABLE moves (
        room TEXT NOT NULL REFERENCES rooms(code),
        game_no INTEGER NOT NULL,
        ply INTEGER NOT NULL,
        move TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        spent_ms BIGINT,
        PRIMARY KEY (room, game_no, ply)
    );
    CREATE TABLE clocks (
        room TEXT NOT NULL REFERENCES rooms(code),
        game_no INTEGER NOT NULL,
        ply INTEGER NOT NULL,
        remaining TEXT NOT NULL,
        PRIMARY KEY (room, game_no, ply)
    );
    CREATE TABLE games (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        room TEXT NOT NULL,
        game_no INTEGER NOT NULL,
        game TEXT NOT NULL,
        options TEXT NOT NULL,
        players TEXT NOT NULL,
        result TEXT NOT NULL,
        reason TEXT NOT NULL,
        moves TEXT NOT NULL,
        transcript TEXT NOT NULL,
        finished_at DOUBLE PRECISION NOT NULL,
        clock TEXT,
        private BOOLEAN NOT NULL DEFAULT FALSE
    );
    CREATE INDEX games_by_game ON games(game, id);
    CREATE INDEX games_by_room ON games(room, game_no);
    CREATE TABLE game_players (
        game_id BIGINT NOT NULL REFERENCES games(id),
        seat INTEGER NOT NULL,
        name TEXT,
        token_hash TEXT,
        PRIMARY KEY (game_id, seat)
    );
    CREATE INDEX game_players_by_name ON game_players(name, game_id);
    CREATE INDEX game_players_by_token ON game_players(token_hash, game_id);
    CREATE TABLE names (
        name_key TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        bot BOOLEAN NOT NULL DEFAULT FALSE,
        claimed_at DOUBLE PRECISION NOT NULL
    );
    CREATE TABLE ratings (
        player TEXT NOT NULL,
        pool TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        rating DOUBLE PRECISION NOT NULL,
        rd DOUBLE PRECISION NOT NULL,
        vol DOUBLE PRECISION NOT NULL,
        games INTEGER NOT NULL DEFAULT 0,
        wins INTEGER NOT NULL DEFAULT 0,
        draws INTEGER NOT NULL DEFAULT 0,
        losses INTEGER NOT NULL DEFAULT 0,
        rated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (player, pool)
    );
    CREATE INDEX ratings_board ON ratings(pool, rating DESC, player);
    CREATE TABLE rating_changes (
        game_id BIGINT NOT NULL REFERENCES games(id),
        seat INTEGER NOT NULL,
        player TEXT NOT NULL,
        pool TEXT NOT NULL,
        before DOUBLE PRECISION NOT NULL,
        after DOUBLE PRECISION NOT NULL,
        rd_before DOUBLE PRECISION NOT NULL,
        rd_after DOUBLE PRECISION NOT NULL,
        outcome TEXT NOT NULL,
        PRIMARY KEY (game_id, seat)
    );
    CREATE INDEX rating_changes_by_player ON rating_changes(player, game_id);
    CREATE TABLE tournaments (
        id TEXT PRIMARY KEY,
        data TEXT NOT NULL,
        finished BOOLEAN NOT NULL DEFAULT FALSE,
        created_at DOUBLE PRECISION NOT NULL
    );
    
-- version 2 (migration 1)
ALTER TABLE tournaments ADD COLUMN owner_epoch BIGINT NOT NULL DEFAULT 0;
UPDATE gamenight_schema SET version = 2;
