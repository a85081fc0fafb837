"""Operations on a running bot: control socket, reload, health, dashboard, retention, dead letters."""
