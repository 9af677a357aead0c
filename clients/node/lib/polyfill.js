"use strict";
// `await using` looks up Symbol.asyncDispose; Node 20 has it, older
// runtimes may not. Imported before any class that defines the method.
Object.defineProperty(exports, "__esModule", { value: true });
if (typeof Symbol.asyncDispose !== 'symbol') {
    Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('Symbol.asyncDispose') });
}
