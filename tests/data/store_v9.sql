-- A SQLite file as gamenight wrote it before server/sqlstore.py (store.py then, schema 9), dumped with iterdump:
-- tests/server/test_store.py opens it with today's store.
PRAGMA user_version = 9;
BEGIN TRANSACTION;
CREATE TABLE clocks (
        room TEXT NOT NULL REFERENCES rooms(code),
        game_no INTEGER NOT NULL,
        ply INTEGER NOT NULL,
        remaining TEXT NOT NULL,
        PRIMARY KEY (room, game_no, ply)
    );
INSERT INTO "clocks" VALUES('OPEN1',0,0,'[300000, 300000]');
INSERT INTO "clocks" VALUES('OPEN1',0,1,'[301800, 300000]');
CREATE TABLE game_players (
        game_id INTEGER NOT NULL REFERENCES games(id),
        seat INTEGER NOT NULL,
        name TEXT,
        token_hash TEXT,
        PRIMARY KEY (game_id, seat)
    );
INSERT INTO "game_players" VALUES(1,0,'ann','hash-ann');
INSERT INTO "game_players" VALUES(1,1,'bob','hash-bob');
INSERT INTO "game_players" VALUES(2,0,'cy','hash-cy');
INSERT INTO "game_players" VALUES(2,1,'dee','hash-dee');
CREATE TABLE games (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        room TEXT NOT NULL,
        game_no INTEGER NOT NULL,
        game TEXT NOT NULL,
        options TEXT NOT NULL,
        players TEXT NOT NULL,
        result TEXT NOT NULL,
        reason TEXT NOT NULL,
        moves TEXT NOT NULL,
        transcript TEXT NOT NULL,
        finished_at REAL NOT NULL
    , clock TEXT, private INTEGER NOT NULL DEFAULT 0);
INSERT INTO "games" VALUES(1,'DONE1',0,'othello','{"size": 8}','[{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}]','{"winner": 0, "reason": "resign"}','resign','["f5", "d6", "c3", "d3"]','f5 d6 c3 d3',1.79576473095042037963e+09,'{"control": "5+3", "spent": [1, 2, 3, 4]}',0);
INSERT INTO "games" VALUES(2,'SECRT',0,'connect4','{}','[{"seat": 0, "name": "cy"}, {"seat": 1, "name": "dee"}]','{"winner": null, "reason": "draw"}','draw','["4"]','4',1.79576473095042037963e+09,NULL,1);
CREATE TABLE moves (
        room TEXT NOT NULL REFERENCES rooms(code),
        game_no INTEGER NOT NULL,
        ply INTEGER NOT NULL,
        move TEXT NOT NULL,
        at REAL NOT NULL, spent_ms INTEGER,
        PRIMARY KEY (room, game_no, ply)
    );
INSERT INTO "moves" VALUES('OPEN1',0,0,'f5',1.79576473095042037963e+09,1200);
INSERT INTO "moves" VALUES('OPEN1',0,1,'d6',1.79576473095042037963e+09,800);
CREATE TABLE names (
        name_key TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        bot INTEGER NOT NULL DEFAULT 0,
        claimed_at REAL NOT NULL
    );
INSERT INTO "names" VALUES('ann','Ann','key-ann',0,1.79576473095042037963e+09);
INSERT INTO "names" VALUES('robo','Robo','key-robo',1,1.79576473095042037963e+09);
CREATE TABLE rating_changes (
        game_id INTEGER NOT NULL REFERENCES games(id),
        seat INTEGER NOT NULL,
        player TEXT NOT NULL,
        pool TEXT NOT NULL,
        before REAL NOT NULL,
        after REAL NOT NULL,
        rd_before REAL NOT NULL,
        rd_after REAL NOT NULL,
        outcome TEXT NOT NULL,
        PRIMARY KEY (game_id, seat)
    );
INSERT INTO "rating_changes" VALUES(1,0,'ann','othello',1500.0,1662.3,350.0,290.3,'win');
INSERT INTO "rating_changes" VALUES(1,1,'bob','othello',1500.0,1337.7,350.0,290.3,'loss');
CREATE TABLE ratings (
        player TEXT NOT NULL,
        pool TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        rating REAL NOT NULL,
        rd REAL NOT NULL,
        vol REAL NOT NULL,
        games INTEGER NOT NULL DEFAULT 0,
        wins INTEGER NOT NULL DEFAULT 0,
        draws INTEGER NOT NULL DEFAULT 0,
        losses INTEGER NOT NULL DEFAULT 0,
        rated_at REAL NOT NULL,
        PRIMARY KEY (player, pool)
    );
INSERT INTO "ratings" VALUES('ann','othello','ann','human',1662.3,290.3,0.06,1,1,0,0,1700000000.0);
INSERT INTO "ratings" VALUES('bob','othello','bob','human',1337.7,290.3,0.06,1,0,0,1,1700000000.0);
CREATE TABLE rooms (
        code TEXT PRIMARY KEY,
        game TEXT NOT NULL,
        options TEXT NOT NULL,
        room_options TEXT NOT NULL,
        host_name TEXT NOT NULL,
        private INTEGER NOT NULL,
        created_at REAL NOT NULL,
        game_no INTEGER NOT NULL DEFAULT 0,
        closed INTEGER NOT NULL DEFAULT 0
    , host_token_hash TEXT, closed_at REAL, owner_epoch INTEGER NOT NULL DEFAULT 0);
INSERT INTO "rooms" VALUES('OPEN1','othello','{"size": 8}','{"clock": "5+3", "rated": true}','ann',0,1.79576473095042037963e+09,0,0,'hash-ann',NULL,1);
INSERT INTO "rooms" VALUES('DONE1','othello','{"size": 8}','{}','ann',0,1.79576473095042037963e+09,0,0,'hash-ann',NULL,0);
INSERT INTO "rooms" VALUES('SECRT','connect4','{}','{}','cy',1,1.79576473095042037963e+09,0,1,'hash-cy',1.79576473095042037963e+09,0);
CREATE TABLE seats (
        room TEXT NOT NULL REFERENCES rooms(code),
        seat INTEGER NOT NULL,
        name TEXT,
        token_hash TEXT,
        ai_level INTEGER,
        ai_bot TEXT, bot INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (room, seat)
    );
INSERT INTO "seats" VALUES('OPEN1',0,'ann','hash-ann',NULL,NULL,0);
INSERT INTO "seats" VALUES('OPEN1',1,NULL,NULL,3,NULL,0);
INSERT INTO "seats" VALUES('DONE1',0,'ann','hash-ann',NULL,NULL,0);
INSERT INTO "seats" VALUES('DONE1',1,'bob','hash-bob',NULL,NULL,0);
CREATE TABLE tournaments (
        id TEXT PRIMARY KEY,
        data TEXT NOT NULL,
        finished INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL
    , owner_epoch INTEGER NOT NULL DEFAULT 0);
INSERT INTO "tournaments" VALUES('t1','{"id": "t1", "game": "othello", "rounds": 2}',0,1.79576473095042037963e+09,0);
CREATE INDEX games_by_game ON games(game, id);
CREATE INDEX game_players_by_name ON game_players(name, game_id);
CREATE INDEX game_players_by_token ON game_players(token_hash, game_id);
CREATE INDEX rooms_closed ON rooms(closed, closed_at);
CREATE INDEX ratings_board ON ratings(pool, rating DESC);
CREATE INDEX rating_changes_by_player ON rating_changes(player, game_id);
CREATE INDEX games_by_room ON games(room, game_no);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('games',2);
COMMIT;
