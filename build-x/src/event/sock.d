build-x/src/event/sock.o: src/event/sock.c src/event/sock.h \
 src/event/loop.h src/event/../core/hayate.h src/event/../core/types.h \
 src/event/../core/buf.h src/event/../core/hayate.h \
 src/event/../core/types.h src/event/../core/outq.h \
 src/event/../core/str.h src/event/../core/file.h \
 src/event/../core/clock.h src/event/../core/mem.h
src/event/sock.h:
src/event/loop.h:
src/event/../core/hayate.h:
src/event/../core/types.h:
src/event/../core/buf.h:
src/event/../core/hayate.h:
src/event/../core/types.h:
src/event/../core/outq.h:
src/event/../core/str.h:
src/event/../core/file.h:
src/event/../core/clock.h:
src/event/../core/mem.h:
