"""The database side: connections and migrations, the schema, named SQL statements, the
embedded server, notifications, shards and the Citus layout, seeds into the frontier."""
