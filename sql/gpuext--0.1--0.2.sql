-- gpuext 0.1 -> 0.2: no SQL-level changes (0.2 changes only the module: PostgreSQL 17 and 18, gpuext.max_device_memory superuser-only).

\echo Use "ALTER EXTENSION gpuext UPDATE TO '0.2'" to load this file. \quit
