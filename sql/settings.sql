-- Settings a DBA can trust: which role may change each of gpuext's settings and where.  The
-- superuser-only ones (host memory pinned per sort, reading table files outside shared buffers,
-- device memory, injected failures) are refused to an ordinary role; gpuext.offload, the
-- server's switch, is refused to every SET, a superuser's included.  (The TAP test
-- 006_settings.pl turns gpuext.offload off and on by reload and checks what it stops.)

LOAD 'gpuext';

-- Every setting that is not fixed at server start, with who may change it.
SELECT name, context, vartype FROM pg_settings
WHERE name LIKE 'gpuext.%' AND context <> 'postmaster' ORDER BY name;

CREATE ROLE regress_gpuext_settings;
SET ROLE regress_gpuext_settings;
-- Superuser-only: refused, and nothing changed.
SET gpuext.debug_sort_piece_size = '1GB';
SHOW gpuext.debug_sort_piece_size;
SET gpuext.read_table_files = off;
SHOW gpuext.read_table_files;
SET gpuext.max_device_memory = '1GB';
SHOW gpuext.max_device_memory;
SET gpuext.debug_fail_device_calls = 'any:1';
SHOW gpuext.debug_fail_device_calls;
SELECT set_config('gpuext.read_table_files', 'off', false);
SHOW gpuext.read_table_files;
ALTER ROLE regress_gpuext_settings SET gpuext.debug_sort_piece_size = '1GB';
-- The server's switch: no session may turn it.
SET gpuext.offload = off;
SELECT set_config('gpuext.offload', 'off', true);
SHOW gpuext.offload;
-- A user's settings stay the user's.
SET gpuext.device = cpu;
SET gpuext.enable_agg = off;
SHOW gpuext.enable_agg;
RESET gpuext.enable_agg;
RESET gpuext.device;
RESET ROLE;

-- A superuser changes the superuser-only ones, but not gpuext.offload, with SET.
SET gpuext.debug_sort_piece_size = '1MB';
SHOW gpuext.debug_sort_piece_size;
RESET gpuext.debug_sort_piece_size;
SET gpuext.read_table_files = off;
SHOW gpuext.read_table_files;
RESET gpuext.read_table_files;
SET gpuext.offload = off;
SHOW gpuext.offload;
-- Nor in a role's or a database's defaults, where a superuser may put a superuser-only one.
ALTER ROLE regress_gpuext_settings SET gpuext.offload = off;
ALTER DATABASE contrib_regression SET gpuext.offload = off;
ALTER ROLE regress_gpuext_settings SET gpuext.read_table_files = off;
SELECT unnest(setconfig) FROM pg_db_role_setting
WHERE setrole = 'regress_gpuext_settings'::regrole;
ALTER ROLE regress_gpuext_settings RESET ALL;
DROP ROLE regress_gpuext_settings;
