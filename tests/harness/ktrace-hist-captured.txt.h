/* placeholder until captured */
"{ lat:       3007 } hitcount:       1024\n"
"\n"
"Totals:\n"
"    Hits: 1024\n"
"    Entries: 1\n"
"    Dropped: 0\n"
