#if PostgreSQL
import PostgresNIO
import PatternLock
#endif
