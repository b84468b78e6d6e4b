// Journal
