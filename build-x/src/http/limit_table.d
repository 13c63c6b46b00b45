build-x/src/http/limit_table.o: src/http/limit_table.c \
 src/http/limit_table.h src/http/../core/slab.h src/http/../core/hayate.h \
 src/http/../core/murmur.h
src/http/limit_table.h:
src/http/../core/slab.h:
src/http/../core/hayate.h:
src/http/../core/murmur.h:
